%% The truth check's Erlang program (README.md): main -> loop_a -> a -> b -> leaf, each with one
%% caller; main -> loop_rec -> rec (recursion); main -> loop_cb -> invoke -> cb (a callback through
%% a fun); and a second process: main -> loop_trip -> round_trip, which sends to a server process
%% (server_loop -> serve), waits for the reply and then calls work: the scheduler switches stacks
%% between the two processes while round_trip's frames are live. The loops are tail-recursive
%% (a jump, no frame), every other call is a body call (`+ 1` after it). Started with
%% `erl -noshell -s chain main N`; without N, init calls main/0, which halts at once (the baseline:
%% the runtime's start-up and exit only).
-module(chain).
-export([main/0, main/1, server_loop/0]).

leaf(I) -> leaf(I, 0).
leaf(X, 20) -> X;
leaf(X, K) -> leaf((X * 31 + K) rem 1000003, K + 1).
b(I) -> leaf(I) + 1.
a(I) -> b(I) + 1.
rec(N) when N =< 1 -> 1;
rec(N) -> rec(N - 1) + (N rem 7).
cb(V) -> (V * 17) rem 101.
invoke(F, V) -> F(V) + 1.
work(V) -> leaf(V + 7) rem 17.

serve(V) -> V rem 13.
server_loop() ->
    receive
        {From, V} -> From ! {self(), serve(V)}, server_loop();
        stop -> ok
    end.
round_trip(Server, V) ->
    Server ! {self(), V},
    R = receive {Server, Reply} -> Reply end,
    work(V) + R.

loop_a(N, N, S) -> S;
loop_a(I, N, S) -> loop_a(I + 1, N, S + a(I)).
loop_rec(N, N, S) -> S;
loop_rec(I, N, S) -> loop_rec(I + 1, N, S + rec(60)).
loop_cb(N, N, S) -> S;
loop_cb(I, N, S) -> loop_cb(I + 1, N, S + invoke(fun cb/1, I)).
loop_trip(_, N, N, S) -> S;
loop_trip(Server, I, N, S) -> loop_trip(Server, I + 1, N, S + round_trip(Server, I)).

main() ->
    halt().
main([Arg]) ->
    N = list_to_integer(atom_to_list(Arg)),
    Server = spawn(?MODULE, server_loop, []),
    S1 = loop_a(0, N, 0),
    S2 = loop_rec(0, N div 100, S1),
    S3 = loop_cb(0, N, S2),
    S4 = loop_trip(Server, 0, N div 10, S3),
    Server ! stop,
    io:format("~p~n", [S4]),
    halt().
