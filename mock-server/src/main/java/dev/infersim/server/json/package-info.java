/**
 * JSON as the server reads and writes it: the shared Jackson mapper and streaming writers ({@link
 * dev.infersim.server.json.Json}), typed field reads with pydantic's rules ({@link dev.infersim.server.json.JsonFields}),
 * Python's float repr ({@link dev.infersim.server.json.PyFloat}) and the refusal every layer throws, written as OpenAI
 * error JSON ({@link dev.infersim.server.json.ApiException}). Uses no other server package.
 */
package dev.infersim.server.json;
