/**
 * Control flow inside a traced body ({@code Flow}'s machinery): cond, whileLoop and mapFn traced
 * into branch functions ({@code Regions}), automatic control dependencies ({@code Effects}) and
 * gradients through them. Not API.
 */
package dev.polyfn.internal.flow;
