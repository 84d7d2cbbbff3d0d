%% cg-inject's Erlang capture: a recursive function, a tail-recursive one and their caller.
-module(jitprobe).
-export([main/0, fib/1]).

fib(N) when N < 2 -> N;
fib(N) -> fib(N - 1) + fib(N - 2).

sum([], Acc) -> Acc;
sum([H | T], Acc) -> sum(T, Acc + H).

main() ->
    F = fib(20),
    S = sum(lists:seq(1, 20000), 0),
    io:format("~p ~p~n", [F, S]),
    halt().
