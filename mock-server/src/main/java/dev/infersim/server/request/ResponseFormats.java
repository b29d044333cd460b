package dev.infersim.server.request;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.server.json.ApiException;
import dev.infersim.server.json.JsonFields;

import java.util.Set;

/**
 * response_format as vLLM's request models read it: an object whose type is one vLLM knows, and on chat a json_schema
 * type must bring its json_schema object with a name. The mock generates no structured output; it only refuses what
 * vLLM refuses, so a client learns of a malformed format here rather than on the real server.
 */
final class ResponseFormats {
    private static final Set<String> TYPES = Set.of("text", "json_object", "json_schema", "structural_tag");
    private static final String FIELD = "response_format";

    private ResponseFormats() {
    }

    static void check(JsonFields fields, boolean chat) {
        JsonNode f = fields.given(FIELD);
        if (f == null) {
            return;
        }
        if (!f.isObject()) {
            throw fields.wrongType(FIELD, "an object with a type", f);
        }
        JsonNode type = f.get("type");
        if (type == null || !type.isTextual() || !TYPES.contains(type.asText())) {
            throw ApiException.badRequest(FIELD, FIELD + ".type: expected 'text', 'json_object', 'json_schema' or "
                    + "'structural_tag', got " + (type == null ? "nothing" : JsonFields.describe(type)));
        }
        if (!type.asText().equals("json_schema")) {
            return;
        }
        JsonNode schema = f.get("json_schema");
        if (schema == null || schema.isNull()) {
            // Only vLLM's chat model has this check; on completions a schema-less json_schema goes through.
            if (chat) {
                throw ApiException.badRequest(FIELD, "When response_format type is 'json_schema', the 'json_schema' field must be provided.");
            }
            return;
        }
        JsonNode name = schema.get("name");
        if (!schema.isObject() || name == null || !name.isTextual()) {
            throw ApiException.badRequest(FIELD, FIELD + ".json_schema: expected an object with a string name");
        }
    }
}
