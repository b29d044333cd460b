package dev.infersim.server.output;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.server.config.ModelFeatures;
import dev.infersim.server.json.ApiException;
import dev.infersim.server.json.JsonFields;

import java.util.ArrayList;
import java.util.List;

/**
 * What a chat request asks of its output's shape: the {@code tools} it offers and its {@code tool_choice}, a
 * {@code response_format} schema, and whether reasoning is returned ({@code include_reasoning}). Validated as vLLM's
 * {@code ChatCompletionRequest.check_tool_usage} and its render step check them (vLLM main at
 * 9aaf83ef502fc37bc647f6e474314d48ba36cd1c: {@code entrypoints/openai/chat_completion/protocol.py},
 * {@code entrypoints/serve/render/serving.py}), with their messages.
 *
 * @param tools            the functions offered, in order; empty for none
 * @param toolChoice       none, auto, required or named
 * @param namedTool        the function a named tool_choice forces, else null
 * @param schema           the JSON Schema of {@code response_format: json_schema}, else null
 * @param jsonObject       {@code response_format: json_object} (or a json_schema without a schema)
 * @param includeReasoning return the reasoning (chat's {@code include_reasoning}, default true)
 */
public record OutputSpec(List<Tool> tools, ToolChoice toolChoice, String namedTool, JsonNode schema, boolean jsonObject,
                  boolean includeReasoning) {

    /** A function a request offers: its name and the JSON Schema of its arguments (null: any object). */
    record Tool(String name, JsonNode parameters) {
    }

    public enum ToolChoice { NONE, AUTO, REQUIRED, NAMED }

    /** Plain text: no tools, no format. */
    public static final OutputSpec PLAIN = new OutputSpec(List.of(), ToolChoice.NONE, null, null, false, true);

    /** Whether the reply may take another shape than plain text. */
    public boolean shaped() {
        return toolChoice != ToolChoice.NONE || schema != null || jsonObject;
    }

    Tool tool(String name) {
        for (Tool t : tools) {
            if (t.name().equals(name)) {
                return t;
            }
        }
        return null;
    }

    /** The output fields of a {@code /v1/chat/completions} body, checked against what the server was started with. */
    public static OutputSpec ofChat(ObjectNode body, ModelFeatures features) {
        List<Tool> tools = tools(body.get("tools"));
        JsonNode choice = body.get("tool_choice");
        ToolChoice mode;
        String named = null;
        if (choice == null || choice.isNull()) {
            // vLLM defaults tool_choice to auto when tools come without one
            mode = body.has("tool_choice") || tools.isEmpty() ? ToolChoice.NONE : ToolChoice.AUTO;
        } else if (choice.isTextual() && choice.asText().equals("none")) {
            mode = ToolChoice.NONE;
        } else {
            if (!body.hasNonNull("tools")) {
                throw ApiException.badRequest("tool_choice", "When using `tool_choice`, `tools` must be set.");
            }
            if (choice.isTextual() && (choice.asText().equals("auto") || choice.asText().equals("required"))) {
                mode = choice.asText().equals("auto") ? ToolChoice.AUTO : ToolChoice.REQUIRED;
            } else if (choice.isObject()) {
                named = namedFunction(choice, tools);
                mode = ToolChoice.NAMED;
            } else {
                throw ApiException.badRequest("tool_choice", "Invalid value for `tool_choice`: " + text(choice)
                        + "! Only named tools, \"none\", \"auto\" or \"required\" are supported.");
            }
        }
        checkParser(mode, named, features);
        JsonNode format = body.get("response_format");
        JsonNode schema = null;
        boolean jsonObject = false;
        if (format != null && format.isObject()) {
            String type = format.path("type").asText();
            if (type.equals("json_object")) {
                jsonObject = true;
            } else if (type.equals("json_schema")) {
                JsonNode s = format.path("json_schema").get("schema");
                if (s != null && s.isObject()) {
                    schema = s;
                } else {
                    jsonObject = true;
                }
            }
        }
        boolean includeReasoning = JsonFields.of(body).optBool("include_reasoning", true);
        // Without auto tool choice on, vLLM passes tools to the template but parses no calls out of the reply.
        if (mode == ToolChoice.AUTO && !features.enableAutoToolChoice()) {
            mode = ToolChoice.NONE;
        }
        return new OutputSpec(tools, mode, named, schema, jsonObject, includeReasoning);
    }

    /**
     * vLLM's render step: without a tool parser, {@code auto} needs {@code --enable-auto-tool-choice} and
     * {@code --tool-call-parser}, and {@code required} or a named function needs {@code --tool-call-parser}.
     */
    static void checkParser(ToolChoice mode, String named, ModelFeatures features) {
        if (features.toolCallParser() != null || mode == ToolChoice.NONE) {
            return;
        }
        if (mode == ToolChoice.AUTO) {
            throw ApiException.badRequest(null, "\"auto\" tool choice requires --enable-auto-tool-choice and "
                    + "--tool-call-parser to be set");
        }
        String which = mode == ToolChoice.REQUIRED ? "required" : "function=ChatCompletionNamedFunction(name='" + named
                + "') type='function'";
        throw ApiException.badRequest(null, "tool_choice=\"" + which + "\" requires --tool-call-parser to be set");
    }

    private static List<Tool> tools(JsonNode t) {
        if (t == null || t.isNull()) {
            return List.of();
        }
        if (!t.isArray()) {
            throw ApiException.badRequest("tools", "tools: expected a list of tools, got " + JsonFields.describe(t));
        }
        if (t.isEmpty()) {
            throw ApiException.badRequest("tools", "`tools` must not be an empty array. Either provide at least one tool "
                    + "or omit the field entirely.");
        }
        List<Tool> out = new ArrayList<>();
        for (int i = 0; i < t.size(); i++) {
            JsonNode tool = t.get(i);
            String where = "tools[" + i + "]";
            if (!tool.isObject()) {
                throw ApiException.badRequest("tools", where + ": expected an object with type and function");
            }
            JsonNode type = tool.get("type");
            if (type != null && !type.isNull() && !"function".equals(type.asText())) {
                throw ApiException.badRequest("tools", where + ".type: Input should be 'function'");
            }
            JsonNode f = tool.get("function");
            if (f == null || !f.isObject()) {
                throw ApiException.badRequest("tools", where + ".function: Field required (an object with a name)");
            }
            JsonNode name = f.get("name");
            if (name == null || !name.isTextual()) {
                throw ApiException.badRequest("tools", where + ".function.name: Field required (a string)");
            }
            JsonNode parameters = f.get("parameters");
            if (parameters != null && !parameters.isNull() && !parameters.isObject()) {
                throw ApiException.badRequest("tools", where + ".function.parameters: Input should be a valid dictionary");
            }
            out.add(new Tool(name.asText(), parameters == null || parameters.isNull() ? null : parameters));
        }
        return out;
    }

    private static String namedFunction(JsonNode choice, List<Tool> tools) {
        String usage = "Correct usage: `{\"type\": \"function\", \"function\": {\"name\": \"my_function\"}}`";
        JsonNode function = choice.get("function");
        if (function == null || !function.isObject()) {
            throw ApiException.badRequest("tool_choice", "Invalid value for `function`: `" + (function == null ? "None"
                    : text(function)) + "` in `tool_choice`! " + usage);
        }
        if (!function.has("name")) {
            throw ApiException.badRequest("tool_choice", "Expected field `name` in `function` in `tool_choice`! " + usage);
        }
        JsonNode name = function.get("name");
        if (!name.isTextual() || name.asText().isEmpty()) {
            throw ApiException.badRequest("tool_choice", "Invalid `name` in `function`: `" + text(name)
                    + "` in `tool_choice`! " + usage);
        }
        for (Tool t : tools) {
            if (t.name().equals(name.asText())) {
                return t.name();
            }
        }
        throw ApiException.badRequest("tool_choice", "The tool specified in `tool_choice` does not match any of the "
                + "specified `tools`");
    }

    private static String text(JsonNode v) {
        return v.isTextual() ? v.asText() : v.toString();
    }
}
