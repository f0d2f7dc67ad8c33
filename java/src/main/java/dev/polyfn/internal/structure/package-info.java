/**
 * Structured values: nested arguments walked into facts, record reflection, nested outputs
 * flattened and rebuilt, and the registry of composite tensor types with the checked calls into
 * them. Not API.
 */
package dev.polyfn.internal.structure;
