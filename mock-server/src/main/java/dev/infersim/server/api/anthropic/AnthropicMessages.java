package dev.infersim.server.api.anthropic;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.server.api.openai.ResponseContext;
import dev.infersim.server.api.openai.Wire;
import dev.infersim.server.json.ApiException;
import dev.infersim.server.json.Json;
import dev.infersim.server.json.JsonFields;
import dev.infersim.server.request.CompletionRequest;

import java.io.IOException;

/**
 * Anthropic's {@code POST /v1/messages} as vLLM serves it (vLLM main at 9aaf83ef502fc37bc647f6e474314d48ba36cd1c,
 * {@code vllm/entrypoints/anthropic/}): the request is checked as {@code AnthropicMessagesRequest} and translated into
 * a chat completion request ({@code AnthropicServingMessages._convert_anthropic_to_openai_request}: system first, text
 * blocks as text, {@code tool_use} blocks as the assistant's calls, {@code tool_result} blocks as tool messages,
 * {@code max_tokens}, {@code stop_sequences}, {@code tool_choice} auto/any/tool/none as auto/required/named/none,
 * tools' {@code input_schema} as their parameters, and a stream with usage on every chunk). The chat request then runs
 * like any other; {@link AnthropicStream} and {@link AnthropicBody} translate its answer back.
 */
public final class AnthropicMessages {
    /**
     * The stop reason of a chat finish, as vLLM maps it ({@code stop_reason_map}; others stay unset), except a finish
     * on one of the request's {@code stop_sequences}: {@code "stop_sequence"}, as Anthropic defines it
     * (https://docs.anthropic.com/en/api/messages), with the {@code stop_sequence} that matched beside it
     * ({@link #writeStopSequence}); vLLM says {@code "end_turn"} there and leaves {@code stop_sequence} unset.
     *
     * @param stopSequence the stop string that ended the choice, or null
     */
    static String stopReason(String finish, String stopSequence) {
        if (stopSequence != null) {
            return "stop_sequence";
        }
        return switch (finish) {
            case "stop" -> "end_turn";
            case "length" -> "max_tokens";
            case "tool_calls" -> "tool_use";
            default -> null;
        };
    }

    /** The {@code stop_sequence} field when a stop sequence ended the choice; unset otherwise, as vLLM leaves it. */
    static void writeStopSequence(JsonGenerator g, String stopSequence) throws IOException {
        if (stopSequence != null) {
            g.writeStringField("stop_sequence", stopSequence);
        }
    }

    static final Wire WIRE = new Wire() {
        /** vLLM's translate_error_response: {@code {"type": "error", "error": {"type", "message"}}}. */
        @Override
        public String error(int status, String message, String param, String type) {
            ObjectNode body = Json.MAPPER.createObjectNode().put("type", "error");
            body.putObject("error").put("type", type).put("message", message);
            return body.toString();
        }

        @Override
        public String id(CompletionRequest request, String requestId) {
            return "chatcmpl-" + requestId; // vLLM answers with the chat completion's id
        }

        @Override
        public Stream stream(ResponseContext response) {
            return new AnthropicStream(response);
        }

        @Override
        public Body body(ResponseContext response) {
            return new AnthropicBody(response);
        }
    };

    private AnthropicMessages() {
    }

    public static Wire.Translation translate(ObjectNode body) {
        return new Wire.Translation(toChat(body), true, WIRE);
    }

    /** The chat completion request a Messages request becomes; 400 where vLLM's request model refuses the body. */
    static ObjectNode toChat(ObjectNode body) {
        JsonFields fields = JsonFields.of(body);
        String model = fields.optString("model");
        if (model == null || model.isEmpty()) {
            throw ApiException.badRequest("model", "model: Field required (a non-empty string)");
        }
        Integer maxTokens = fields.optInt("max_tokens", Integer.MIN_VALUE, Integer.MAX_VALUE);
        if (maxTokens == null) {
            throw ApiException.badRequest("max_tokens", "max_tokens: Field required");
        }
        if (maxTokens <= 0) {
            throw ApiException.badRequest("max_tokens", "max_tokens must be positive");
        }
        ObjectNode chat = Json.MAPPER.createObjectNode();
        chat.put("model", model);
        ArrayNode messages = chat.putArray("messages");
        system(body.get("system"), messages);
        JsonNode ms = body.get("messages");
        if (ms == null || !ms.isArray()) {
            throw ApiException.badRequest("messages", "messages: Field required (a list of messages)");
        }
        for (int i = 0; i < ms.size(); i++) {
            message(ms.get(i), "messages[" + i + "]", messages);
        }
        chat.put("max_tokens", maxTokens);
        chat.put("max_completion_tokens", maxTokens);
        copy(body, "stop_sequences", chat, "stop");
        copy(body, "temperature", chat, "temperature");
        copy(body, "top_p", chat, "top_p");
        copy(body, "top_k", chat, "top_k");
        copy(body, "infersim", chat, "infersim");
        if (fields.optBool("stream", false)) {
            chat.put("stream", true);
            chat.putObject("stream_options").put("include_usage", true).put("continuous_usage_stats", true);
        }
        toolChoice(body.get("tool_choice"), chat);
        tools(body.get("tools"), chat);
        return chat;
    }

    private static void copy(ObjectNode from, String key, ObjectNode to, String as) {
        JsonNode v = from.get(key);
        if (v != null && !v.isNull()) {
            to.set(as, v);
        }
    }

    private static void system(JsonNode system, ArrayNode messages) {
        if (system == null || system.isNull()) {
            return;
        }
        String text;
        if (system.isTextual()) {
            text = system.asText();
        } else if (system.isArray()) {
            StringBuilder b = new StringBuilder();
            for (JsonNode block : system) {
                String t = block.path("text").asText("");
                // vLLM drops Claude Code's per-request billing header, which would defeat prefix caching
                if (block.path("type").asText().equals("text") && !t.startsWith("x-anthropic-billing-header")) {
                    b.append(t);
                }
            }
            text = b.toString();
        } else {
            throw ApiException.badRequest("system", "system: expected a string or a list of content blocks");
        }
        if (!text.isEmpty()) {
            messages.addObject().put("role", "system").put("content", text);
        }
    }

    private static void message(JsonNode m, String where, ArrayNode messages) {
        String role = m.path("role").asText("");
        if (!role.equals("user") && !role.equals("assistant")) {
            throw ApiException.badRequest("messages", where + ".role: Input should be 'user' or 'assistant'");
        }
        JsonNode content = m.get("content");
        if (content != null && content.isTextual()) {
            messages.addObject().put("role", role).put("content", content.asText());
            return;
        }
        if (content == null || !content.isArray()) {
            throw ApiException.badRequest("messages", where + ".content: expected a string or a list of content blocks");
        }
        StringBuilder text = new StringBuilder();
        for (JsonNode block : content) {
            switch (block.path("type").asText("")) {
                case "text" -> text.append(block.path("text").asText(""));
                // the template renders the call; its JSON stands in for it in the prompt's tokens
                case "tool_use" -> text.append(Json.MAPPER.createObjectNode().put("name", block.path("name").asText(""))
                        .set("arguments", block.path("input")).toString());
                case "tool_result" -> messages.addObject().put("role", "tool").put("content", toolResult(block.get("content")));
                case "thinking", "redacted_thinking", "tool_reference" -> { }
                case "image" -> throw ApiException.badRequest("messages", where + ": image blocks need a multimodal model");
                default -> throw ApiException.badRequest("messages", where + ".content: unknown block type "
                        + block.path("type"));
            }
        }
        if (text.length() > 0 || role.equals("assistant")) {
            messages.addObject().put("role", role).put("content", text.toString());
        }
    }

    private static String toolResult(JsonNode c) {
        if (c == null || c.isNull()) {
            return "";
        }
        if (c.isTextual()) {
            return c.asText();
        }
        StringBuilder b = new StringBuilder();
        for (JsonNode item : c) {
            if (item.path("type").asText().equals("text")) {
                b.append(b.length() > 0 ? "\n" : "").append(item.path("text").asText(""));
            }
        }
        return b.toString();
    }

    private static void toolChoice(JsonNode choice, ObjectNode chat) {
        if (choice == null || choice.isNull()) {
            return;
        }
        String type = choice.path("type").asText("");
        switch (type) {
            case "auto" -> chat.put("tool_choice", "auto");
            case "any" -> chat.put("tool_choice", "required");
            case "none" -> chat.put("tool_choice", "none");
            case "tool" -> {
                String name = choice.path("name").asText("");
                if (name.isEmpty()) {
                    throw ApiException.badRequest("tool_choice", "tool_choice.name is required when type is 'tool'");
                }
                chat.putObject("tool_choice").put("type", "function").putObject("function").put("name", name);
            }
            default -> throw ApiException.badRequest("tool_choice", "tool_choice.type: Input should be 'auto', 'any', "
                    + "'tool' or 'none'");
        }
    }

    private static void tools(JsonNode tools, ObjectNode chat) {
        if (tools == null || tools.isNull()) {
            return;
        }
        if (!tools.isArray()) {
            throw ApiException.badRequest("tools", "tools: expected a list of tools");
        }
        ArrayNode out = chat.putArray("tools");
        for (JsonNode t : tools) {
            JsonNode schema = t.get("input_schema");
            if (schema == null || !schema.isObject()) {
                throw ApiException.badRequest("tools", "input_schema must be a dictionary");
            }
            ObjectNode parameters = ((ObjectNode) schema).deepCopy();
            if (!parameters.has("type")) {
                parameters.put("type", "object"); // vLLM defaults the schema's type
            }
            ObjectNode f = out.addObject().put("type", "function").putObject("function");
            f.put("name", t.path("name").asText(""));
            if (t.hasNonNull("description")) {
                f.put("description", t.get("description").asText());
            }
            f.set("parameters", parameters);
        }
        if (!chat.has("tool_choice")) {
            chat.put("tool_choice", "auto");
        }
    }
}
