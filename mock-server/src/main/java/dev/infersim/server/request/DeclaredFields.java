package dev.infersim.server.request;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.server.json.JsonFields;
import dev.infersim.server.output.OutputSpec;

import java.util.Map;

/**
 * Fields of vLLM's request models ({@code CompletionRequest}, {@code ChatCompletionRequest} in
 * {@code vllm/entrypoints/openai/protocol.py}) that infersim does not use, checked for the type pydantic checks, so a
 * wrong type is a 400 naming the field, as vLLM answers, instead of passing unnoticed ({@code tools}, {@code tool_choice}
 * and {@code include_reasoning} are read, and checked, by {@link OutputSpec}). Fields vLLM does not declare pass, as
 * they pass vLLM (its models keep unknown fields and log them).
 */
final class DeclaredFields {
    private enum Kind { BOOLEAN, INTEGER, NUMBER, STRING, LIST, OBJECT, STRING_OR_OBJECT, INTEGER_LIST, STRING_LIST }

    private static final Map<String, Kind> BOTH = Map.ofEntries(
            Map.entry("length_penalty", Kind.NUMBER),
            Map.entry("stop_token_ids", Kind.INTEGER_LIST),
            Map.entry("include_stop_str_in_output", Kind.BOOLEAN),
            Map.entry("skip_special_tokens", Kind.BOOLEAN),
            Map.entry("spaces_between_special_tokens", Kind.BOOLEAN),
            Map.entry("truncate_prompt_tokens", Kind.INTEGER),
            Map.entry("add_special_tokens", Kind.BOOLEAN),
            Map.entry("request_id", Kind.STRING),
            Map.entry("return_tokens_as_token_ids", Kind.BOOLEAN),
            Map.entry("return_token_ids", Kind.BOOLEAN),
            Map.entry("cache_salt", Kind.STRING),
            Map.entry("kv_transfer_params", Kind.OBJECT),
            Map.entry("vllm_xargs", Kind.OBJECT),
            Map.entry("structured_outputs", Kind.OBJECT),
            Map.entry("guided_json", Kind.STRING_OR_OBJECT),
            Map.entry("guided_regex", Kind.STRING),
            Map.entry("guided_choice", Kind.STRING_LIST),
            Map.entry("guided_grammar", Kind.STRING),
            Map.entry("guided_decoding_backend", Kind.STRING),
            Map.entry("guided_whitespace_pattern", Kind.STRING),
            Map.entry("logits_processors", Kind.LIST));

    private static final Map<String, Kind> CHAT = Map.ofEntries(
            Map.entry("parallel_tool_calls", Kind.BOOLEAN),
            Map.entry("reasoning_effort", Kind.STRING),
            Map.entry("documents", Kind.LIST),
            Map.entry("chat_template", Kind.STRING),
            Map.entry("chat_template_kwargs", Kind.OBJECT),
            Map.entry("mm_processor_kwargs", Kind.OBJECT),
            Map.entry("bad_words", Kind.STRING_LIST));

    private DeclaredFields() {
    }

    static void check(JsonFields fields, boolean chat) {
        BOTH.forEach((field, kind) -> check(fields, field, kind));
        if (chat) {
            CHAT.forEach((field, kind) -> check(fields, field, kind));
        }
    }

    private static void check(JsonFields fields, String field, Kind kind) {
        JsonNode v = fields.given(field);
        if (v == null) {
            return;
        }
        switch (kind) {
            case BOOLEAN -> fields.optBool(field, false);
            case INTEGER -> fields.optInt(field, Integer.MIN_VALUE, Integer.MAX_VALUE);
            case NUMBER -> fields.optNumber(field, -Double.MAX_VALUE, Double.MAX_VALUE);
            case STRING -> fields.optString(field);
            case LIST -> expect(v.isArray(), fields, field, "a list", v);
            case OBJECT -> expect(v.isObject(), fields, field, "an object", v);
            case STRING_OR_OBJECT -> expect(v.isTextual() || v.isObject(), fields, field, "a string or an object", v);
            case INTEGER_LIST -> {
                expect(v.isArray(), fields, field, "a list of integers", v);
                v.forEach(e -> expect(e.isIntegralNumber() && e.canConvertToInt(), fields, field, "a list of integers", e));
            }
            case STRING_LIST -> {
                expect(v.isArray(), fields, field, "a list of strings", v);
                v.forEach(e -> expect(e.isTextual(), fields, field, "a list of strings", e));
            }
        }
    }

    private static void expect(boolean ok, JsonFields fields, String field, String what, JsonNode got) {
        if (!ok) {
            throw fields.wrongType(field, what, got);
        }
    }
}
