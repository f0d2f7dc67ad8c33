/**
 * A polymorphic function's core ({@code FunctionCore}, which each public function wraps): its
 * state, the cached call and the call that traces, the trace protocol ({@code Trace}, {@code
 * TracingInputs}, {@code TraceOutputs}), argument walking into facts, nested calls, signature
 * inference and the warm-start trace cache. Not API.
 */
package dev.polyfn.internal.trace;
