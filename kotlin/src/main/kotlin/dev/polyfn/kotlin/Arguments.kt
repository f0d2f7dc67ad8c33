package dev.polyfn.kotlin

import dev.polyfn.FunctionOptions

/**
 * The pairs as an argument map in their order, for every kind of function's calls with pairs; a
 * name given twice is an [IllegalArgumentException] rather than a silently dropped argument.
 */
internal fun argumentMap(args: Array<out Pair<String, Any>>): Map<String, Any> {
    val map = LinkedHashMap<String, Any>(args.size * 2)
    for ((name, value) in args) {
        require(map.put(name, value) == null) { "argument '$name' is given twice" }
    }
    return map
}

/**
 * The default options, named [name] unless it is `null`; for the `polyfn…(name) { }` builders
 * (published for the inline [polyfnUnary]).
 */
@PublishedApi
internal fun optionsNamed(name: String?): FunctionOptions {
    val options = FunctionOptions.defaults()
    return if (name == null) options else options.withName(name)
}
