/**
 * The shape of one choice's output: the request's tools, tool choice and response format ({@link
 * dev.infersim.server.output.OutputSpec}), the layout of reasoning, content and tool calls over its tokens ({@link
 * dev.infersim.server.output.OutputPlan}), the JSON-schema and regex samplers that fill them, the token text and the
 * stop strings that end it. Pure functions of the request and a seed; uses {@code json}, {@code text} and {@code config}.
 */
package dev.infersim.server.output;
