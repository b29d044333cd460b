/**
 * Anthropic's Messages API as vLLM serves it: the request translated to chat, the reply written as a Messages body
 * or event stream. Built on {@code api.openai}'s wire.
 */
package dev.infersim.server.api.anthropic;
