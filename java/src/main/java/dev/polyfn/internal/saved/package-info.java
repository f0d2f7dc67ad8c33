/**
 * SavedModels: writing a function's concrete functions, signatures, checkpoint and metadata;
 * loading Polyfn's and Python's SavedModels back as functions with their saved dispatch; the
 * FunctionDef libraries they carry; bounded file reads and JSON. Not API.
 */
package dev.polyfn.internal.saved;
