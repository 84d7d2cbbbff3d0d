# cg-inject's Elixir capture: modules in a .ex file with a struct, maps, a recursive function
# and anonymous functions. Under Valgrind 3.19 it crashed BEAM every time: BEAMJIT's inlined map
# lookups test a bit with `bt` while RSP is on the Erlang process's stack, and Valgrind's `bt`
# wrote 288 bytes below RSP, into the process's heap (issue 32, Valgrind patch 0011).
defmodule Shop.Item do
  defstruct [:name, :price, :qty]
end

defmodule Shop.Cart do
  alias Shop.Item
  def new, do: %{}
  def add(cart, %Item{name: name} = item), do: Map.update(cart, name, item, fn old -> %{old | qty: old.qty + item.qty} end)
  def total(cart), do: cart |> Map.values() |> Enum.map(fn i -> i.price * i.qty end) |> Enum.sum()
end

defmodule Shop.Main do
  alias Shop.{Cart, Item}
  def build(n) do
    Enum.reduce(1..n, Cart.new(), fn i, cart ->
      Cart.add(cart, %Item{name: "item#{rem(i, 97)}", price: rem(i * 7, 13) + 1, qty: 1})
    end)
  end
  def words(n), do: for(i <- 1..n, do: Integer.to_string(i * 7919, 36)) |> Enum.join(" ")
  def run(n) do
    cart = build(n)
    freq = words(n) |> String.split() |> Enum.frequencies_by(&String.length/1)
    IO.puts("total #{Cart.total(cart)} items #{map_size(cart)} freq #{inspect(Enum.sort(freq))}")
  end
end

