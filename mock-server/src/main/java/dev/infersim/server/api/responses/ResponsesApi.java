package dev.infersim.server.api.responses;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.server.api.openai.ResponseContext;
import dev.infersim.server.api.openai.Wire;
import dev.infersim.server.config.ModelFeatures;
import dev.infersim.server.json.ApiException;
import dev.infersim.server.json.Json;
import dev.infersim.server.json.JsonFields;
import dev.infersim.server.request.CompletionRequest;
import io.netty.buffer.ByteBuf;

import java.io.IOException;
import java.io.OutputStream;

/**
 * OpenAI's {@code POST /v1/responses} as vLLM serves it without Harmony (vLLM main at
 * 9aaf83ef502fc37bc647f6e474314d48ba36cd1c, {@code vllm/entrypoints/openai/responses/}): the request is checked as
 * {@code ResponsesRequest} (its {@code check_tool_usage}, {@code validate_prompt}) and run as the chat request its
 * input makes ({@code instructions} as the system message, input messages and function calls and their outputs as
 * chat messages, {@code max_output_tokens} as max_tokens, function tools, {@code text.format} json_schema as the
 * response format). {@link ResponseObject} and {@link ResponsesEventStream} write the answer. vLLM keeps responses
 * for {@code previous_response_id}, {@code background} and {@code GET /v1/responses/{id}}; the mock stores none and
 * refuses those with a 400 that says so.
 */
public final class ResponsesApi {
    private ResponsesApi() {
    }

    /** The chat request of a Responses body and the format its answer takes. */
    public static Wire.Translation translate(ObjectNode body, ModelFeatures features) {
        JsonFields fields = JsonFields.of(body);
        if (body.hasNonNull("prompt")) {
            throw ApiException.badRequest("prompt", "prompt template is not supported");
        }
        if (body.hasNonNull("previous_response_id")) {
            throw ApiException.badRequest("previous_response_id", "previous_response_id: infersim stores no responses");
        }
        if (fields.optBool("background", false)) {
            throw ApiException.badRequest("background", "background: infersim stores no responses to poll");
        }
        ObjectNode chat = Json.MAPPER.createObjectNode();
        if (body.has("model")) {
            chat.set("model", body.get("model"));
        }
        ArrayNode messages = chat.putArray("messages");
        String instructions = fields.optString("instructions");
        if (instructions != null) {
            messages.addObject().put("role", "system").put("content", instructions);
        }
        input(body.get("input"), messages);
        Integer max = fields.optInt("max_output_tokens", 1, Integer.MAX_VALUE);
        if (max != null) {
            chat.put("max_tokens", max);
        }
        for (String key : new String[] {"temperature", "top_p", "top_k", "seed", "stop", "ignore_eos", "priority",
                "presence_penalty", "frequency_penalty", "repetition_penalty", "logit_bias", "user", "infersim"}) {
            if (body.hasNonNull(key)) {
                chat.set(key, body.get(key));
            }
        }
        if (fields.optBool("stream", false)) {
            chat.put("stream", true);
        }
        boolean hasTools = tools(body.get("tools"), chat);
        toolChoice(body.get("tool_choice"), hasTools, chat, features);
        JsonNode format = body.path("text").path("format");
        if (format.path("type").asText().equals("json_schema") && format.path("schema").isObject()) {
            chat.putObject("response_format").put("type", "json_schema").putObject("json_schema")
                    .put("name", format.path("name").asText("response")).set("schema", format.get("schema"));
        }
        return new Wire.Translation(chat, true, new ResponsesWire(body, echoedBytes(body)));
    }

    /**
     * About the bytes of the request fields a response object echoes ({@link ResponseObject}): counted here, where a
     * large body is translated off the event loop, so that the answer knows whether an event loop may write it.
     */
    static long echoedBytes(ObjectNode body) {
        long bytes = 0;
        for (String key : new String[] {"instructions", "metadata", "tool_choice", "tools", "reasoning", "text", "user"}) {
            JsonNode v = body.get(key);
            if (v != null) {
                bytes += Json.serializedBytes(v);
            }
        }
        return bytes;
    }

    private static void input(JsonNode input, ArrayNode messages) {
        if (input == null || input.isNull()) {
            throw ApiException.badRequest("input", "input: Field required");
        }
        if (input.isTextual()) {
            messages.addObject().put("role", "user").put("content", input.asText());
            return;
        }
        if (!input.isArray()) {
            throw ApiException.badRequest("input", "input: expected a string or a list of input items");
        }
        for (int i = 0; i < input.size(); i++) {
            JsonNode item = input.get(i);
            String type = item.path("type").asText("message");
            switch (type) {
                case "message" -> messages.addObject().put("role", item.path("role").asText("user"))
                        .put("content", content(item.get("content"), i));
                // the template renders a call and its result; their text stands in for them in the prompt's tokens
                case "function_call" -> messages.addObject().put("role", "assistant").put("content",
                        Json.MAPPER.createObjectNode().put("name", item.path("name").asText(""))
                                .put("arguments", item.path("arguments").asText("")).toString());
                case "function_call_output" -> messages.addObject().put("role", "tool")
                        .put("content", item.path("output").asText(""));
                case "reasoning" -> { }
                default -> throw ApiException.badRequest("input", "input[" + i + "]: item type '" + type + "' is not supported");
            }
        }
    }

    private static String content(JsonNode c, int i) {
        if (c == null || c.isNull()) {
            return "";
        }
        if (c.isTextual()) {
            return c.asText();
        }
        StringBuilder b = new StringBuilder();
        for (JsonNode part : c) {
            String type = part.path("type").asText("");
            if (!type.equals("input_text") && !type.equals("output_text") && !type.equals("text")) {
                throw ApiException.badRequest("input", "input[" + i + "].content: part type '" + type + "' needs a multimodal model");
            }
            b.append(part.path("text").asText(""));
        }
        return b.toString();
    }

    private static boolean tools(JsonNode tools, ObjectNode chat) {
        if (tools == null || tools.isNull() || tools.isEmpty()) {
            return false;
        }
        ArrayNode out = chat.putArray("tools");
        for (JsonNode t : tools) {
            String type = t.path("type").asText("");
            if (!type.equals("function")) {
                throw ApiException.badRequest("tools", "tools: type '" + type + "' needs vLLM's built-in tool server; "
                        + "function tools only");
            }
            ObjectNode f = out.addObject().put("type", "function").putObject("function");
            f.put("name", t.path("name").asText(""));
            if (t.hasNonNull("description")) {
                f.put("description", t.get("description").asText());
            }
            if (t.hasNonNull("parameters")) {
                f.set("parameters", t.get("parameters"));
            }
        }
        return true;
    }

    /** {@code ResponsesRequest.check_tool_usage}, then the chat tool_choice it runs as. */
    private static void toolChoice(JsonNode choice, boolean hasTools, ObjectNode chat, ModelFeatures features) {
        String mode = choice == null || choice.isNull() ? "auto" : choice.isTextual() ? choice.asText() : null;
        boolean named = choice != null && choice.isObject() && "function".equals(choice.path("type").asText());
        if (!hasTools) {
            if ("required".equals(mode)) {
                throw ApiException.badRequest("tool_choice", "Tool choice 'required' must be specified with 'tools' parameter.");
            }
            if (named) {
                throw ApiException.badRequest("tool_choice", "Tool choice 'function' not found in 'tools' parameter.");
            }
            return;
        }
        if (named) {
            String name = choice.path("name").asText("");
            boolean known = false;
            for (JsonNode t : chat.get("tools")) {
                known |= t.path("function").path("name").asText().equals(name);
            }
            if (!known) {
                throw ApiException.badRequest("tool_choice", "Tool choice 'function' not found in 'tools' parameter.");
            }
            chat.putObject("tool_choice").put("type", "function").putObject("function").put("name", name);
        } else if ("auto".equals(mode)) {
            // vLLM's Responses parses calls out of an auto reply only with auto tool choice on; else the reply is text
            chat.put("tool_choice", features.enableAutoToolChoice() ? "auto" : "none");
        } else if ("none".equals(mode) || "required".equals(mode)) {
            chat.put("tool_choice", mode);
        } else {
            throw ApiException.badRequest("tool_choice", "tool_choice: expected 'none', 'auto', 'required' or a function");
        }
    }

    /**
     * The Responses format of one request; holds the request's body, which the response object echoes, and the bytes
     * that echo takes: an answer that echoes more than an event loop should write is written by a worker thread.
     */
    private record ResponsesWire(ObjectNode body, long echoedBytes) implements Wire {
        @Override
        public String id(CompletionRequest request, String requestId) {
            String given = body.path("request_id").asText("");
            return given.isEmpty() ? "resp_" + requestId : given;
        }

        @Override
        public Stream stream(ResponseContext response) {
            return new ResponsesEventStream(new ResponseObject(body, echoedBytes, response));
        }

        @Override
        public Body body(ResponseContext response) {
            ResponseObject r = new ResponseObject(body, echoedBytes, response);
            return new Body() {
                @Override
                public void write(ByteBuf out) {
                    Json.write(out, g -> r.write(g, true, true));
                }

                @Override
                public long estimatedBytes() {
                    return echoedBytes;
                }

                @Override
                public void write(OutputStream out) throws IOException {
                    Json.write(out, g -> r.write(g, true, true));
                }
            };
        }
    }
}
