# record-elixir: compiles ../../data/elixir/shop.ex (copied beside this script) and runs it.
Code.require_file("shop.ex", __DIR__)
Shop.Main.run(20000)
