/**
 * OpenAI's Responses API as vLLM serves it without Harmony: the request translated to chat, the reply written as a
 * response object or its event stream. Built on {@code api.openai}'s wire.
 */
package dev.infersim.server.api.responses;
