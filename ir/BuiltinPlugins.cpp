// The signatures of the native std plugins (std.md §5), in the language's own notation; ir::lower
// registers each one as a plugin type of the `std` namespace and runtime/plugins/*.cpp registers an
// implementation under the same fully qualified name. Invariant: every entry here has exactly one native
// implementation (checked by a unit test), and parameter names match the reference (keyword calls).
//
// Grammar of a signature string (parsed by PluginSignature.cpp):
//   signature := qualname '(' [ param { ',' param } ] ')' [ '->' type ]
//   param     := name ':' type [ '=' literal ]      -- a default only marks the parameter optional
//              | '*' name ':' type                    -- extra positional arguments (a list)
//              | '**' name ':' type                   -- extra keyword arguments (a dict)
//              | '*'                                  -- the following parameters are keyword-only
//   type      := base [ '[]' ] [ '?' ]
//   base      := string | int | float | bool | number | list | dict | any | <fully qualified entity>
// Fully qualified typedef names (std::ipv4_address) are accepted and checked as `any`.
// Defaults: the evaluator passes Value::null() for an omitted parameter that has a default; the native
// implementation substitutes the real default (the literal written here is documentation only). Every std
// default is therefore chosen so that null means "use the default".
// No return type means the plugin returns null (`-> null`).
#include "ir/Lower.h"

namespace inm::ir {

const std::vector<PluginSpec>& builtinPluginSpecs() {
  static const std::vector<PluginSpec> specs = {
      // ---- strings
      {"std::replace(string: string, old: string, new: string) -> string"},
      {"std::upper(string: string) -> string"},
      {"std::lower(string: string) -> string"},
      {"std::capitalize(string: string) -> string"},
      {"std::limit(string: string, length: int) -> string"},
      {"std::length(value: string) -> int"},
      {"std::split(string_list: string, delim: string) -> list"},
      {"std::hostname(fqdn: string) -> string"},
      {"std::unique_file(prefix: string, seed: string, suffix: string, length: int = 20) -> string"},
      // ---- lists and dicts
      {"std::count(item_list: list) -> int"},
      {"std::len(item_list: list) -> int"},
      {"std::unique(item_list: list) -> bool"},
      {"std::flatten(item_list: list) -> list"},
      {"std::sequence(i: int, start: int = 0, offset: int = 0) -> list"},
      {"std::at(objects: list, index: int) -> any"},
      {"std::item(objects: list, index: int) -> list"},
      {"std::key_sort(items: list, key: any) -> list"},
      {"std::select(objects: list, attr: string) -> list", false, true},
      {"std::filter(values: list, not_item: std::Entity) -> list", false, true},
      {"std::dict_get(dct: dict, key: string) -> string", false, true},
      {"std::contains(dct: dict, key: string) -> bool", false, true},
      // ---- values and objects
      {"std::print(message: any)"},
      {"std::assert(expression: bool, message: string = \"\")"},
      {"std::equals(arg1: any, arg2: any, desc: string? = null)", false, true},
      {"std::isset(value: any) -> bool"},
      {"std::inlineif(conditional: bool, a: any, b: any) -> any"},
      {"std::attr(obj: any, attr: string) -> any"},
      {"std::getattr(entity: std::Entity, attribute_name: string, default_value: any = null, "
       "no_unknown: bool = true) -> any"},
      {"std::is_instance(obj: any, cls: string) -> bool"},
      {"std::type(obj: any) -> any"},
      {"std::objid(value: any) -> string"},
      {"std::is_unknown(value: any) -> bool", true},
      {"std::invert(value: bool) -> bool", false, true},
      {"std::to_number(value: any) -> number", false, true},
      {"std::timestamp(dummy: any = null) -> int"},
      {"std::familyof(member: std::OS, family: string) -> bool"},
      // ---- files and templates
      {"std::template(path: string, **kwargs: any) -> string"},
      {"std::file(path: string) -> string"},
      {"std::source(path: string) -> string"},
      {"std::list_files(path: string) -> list"},
      // ---- secrets
      {"std::generate_password(pw_id: string, length: int = 20) -> string"},
      {"std::password(pw_id: string) -> string"},
      // ---- environment and server
      {"std::environment() -> string"},
      {"std::environment_name() -> string"},
      {"std::environment_server() -> string"},
      {"std::server_ca() -> string"},
      {"std::server_ssl() -> bool"},
      {"std::server_token(client_types: string[] = [\"agent\"]) -> string"},
      {"std::server_port() -> int"},
      {"std::getfact(resource: any, fact_name: string, default_value: any = null) -> any"},
      {"std::get_env(name: string, default_value: string? = null) -> string"},
      {"std::get_env_int(name: string, default_value: int? = null) -> int"},
      // ---- network
      {"std::prefixlength_to_netmask(prefixlen: int) -> std::ipv4_address"},
      {"std::prefixlen(addr: std::ipv_any_interface) -> int"},
      {"std::network_address(addr: std::ipv_any_interface) -> std::ipv_any_address"},
      {"std::netmask(addr: std::ipv_any_interface) -> std::ipv_any_address"},
      {"std::ipindex(addr: std::ipv_any_network, position: int, keep_prefix: bool = false) -> string"},
      {"std::add_to_ip(addr: std::ipv_any_address, n: int) -> std::ipv_any_address"},
      {"std::ip_address_from_interface(ip_interface: std::ipv_any_interface) -> std::ipv_any_address"},
      // ---- validation
      {"std::validate_type(fq_type_name: string, value: any, validation_parameters: dict? = null) -> bool"},
      {"std::is_base64_encoded(s: string) -> bool"},
  };
  return specs;
}

} // namespace inm::ir
