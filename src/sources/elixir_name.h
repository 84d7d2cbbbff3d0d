// Elixir's spelling of the functions of Elixir modules. BEAMJIT names every function in Erlang's
// syntax ('Elixir.Shop.Main':run/1, quoted because the module's atom has dots and capitals);
// Elixir writes the module as its alias and the function as a remote call: Shop.Main.run/1,
// Kernel.+/2, Shop.Item."-inlined-__info__/1-"/1, and an anonymous function as
// "anonymous fn/2 in Shop.Main.build/1" (Exception.format_mfa, Elixir 1.14).
#pragma once

#include <string>
#include <string_view>

namespace cg_inject {

/// The value of an atom as BEAM prints it: "run" stays, "'it\\'s'" becomes "it's".
std::string AtomValue(std::string_view text);

/// The alias of the Elixir module whose atom has the value `module` ("Elixir.Shop.Main" ->
/// "Shop.Main"), or empty when it is no Elixir alias (Erlang's modules, 'Elixir.foo').
std::string ElixirAlias(std::string_view module);

/// How Elixir writes function `function` (an atom's value) of arity `arity` (digits) of the
/// module aliased `alias`: "Shop.Main.run/1". An anonymous function's name says which function
/// defines it; the compiler numbers the ones of one function from 0, and the second and later
/// keep that number ("anonymous fn/2 in Shop.Main.build/1 #1") so that two are not one.
std::string ElixirFunctionName(std::string_view alias, std::string_view function,
                               std::string_view arity);

}  // namespace cg_inject
