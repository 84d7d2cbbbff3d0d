-module(fib).
-export([main/0, fib/1]).
fib(N) when N < 2 -> N;
fib(N) -> fib(N - 1) + fib(N - 2).
main() -> io:format("~p~n", [lists:sum([fib(18) || _ <- lists:seq(1, 20)])]).
