Shop.Main.run(2000)
