%% One call stack per Erlang process (issue 32 §2, tests/e2e/callgraph/stacks.sh): main/0 starts
%% a second process and calls work/3, which sends it a message and waits for the reply 100
%% times, computing between replies (collatz/3, steps/2); the second process (echo/0) computes
%% its replies (mix/3) about as long. BEAM runs each process on a stack of its own and switches
%% between them at every receive that waits.
-module(stacks).
-export([main/0]).

main() ->
    Echo = spawn(fun echo/0),
    R = work(Echo, 100, 0),
    Echo ! stop,
    io:format("~p~n", [R]).

work(_Echo, 0, Acc) -> Acc;
work(Echo, N, Acc) ->
    Echo ! {self(), N},
    receive {reply, M} -> work(Echo, N - 1, Acc + collatz(M, 40, 0)) end.

collatz(_M, 0, Acc) -> Acc;
collatz(M, K, Acc) -> collatz(M + 1, K - 1, Acc + steps(M, 0)).

steps(1, S) -> S;
steps(M, S) when M rem 2 =:= 0 -> steps(M div 2, S + 1);
steps(M, S) -> steps(3 * M + 1, S + 1).

echo() ->
    receive
        {From, N} -> From ! {reply, mix(N, 2000, N) rem 1000 + 1}, echo();
        stop -> ok
    end.

mix(_N, 0, A) -> A;
mix(N, K, A) -> mix(N, K - 1, (A * 31 + K) rem 1000003).
