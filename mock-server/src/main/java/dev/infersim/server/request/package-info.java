/**
 * OpenAI request bodies checked field by field as vLLM's pydantic models check them ({@link
 * dev.infersim.server.request.RequestParser}) into a {@link dev.infersim.server.request.CompletionRequest}: sampling
 * checks, seeds, images, response formats, the fields infersim ignores. Uses the packages below {@code model}.
 */
package dev.infersim.server.request;
