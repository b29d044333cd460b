package dev.infersim.server.json;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Typed reads of the fields of one JSON object, as vLLM's pydantic request models check them: a field that is absent
 * or null is not given; one of the wrong JSON type or outside its range is a 400 whose message and {@code param} name
 * the field and show what was sent ({@link #describe}). The fields of a nested object ({@link #within}) are named by
 * their path and reported under the enclosing field, as vLLM reports a bad key of {@code kv_transfer_params}.
 */
public final class JsonFields {
    private final ObjectNode object;
    /** What a field's name is prefixed with in messages: "" at the top, {@code "outer."} inside {@code outer}. */
    private final String prefix;
    /** The param every refusal names; null to name the field itself. */
    private final String param;

    private JsonFields(ObjectNode object, String prefix, String param) {
        this.object = object;
        this.prefix = prefix;
        this.param = param;
    }

    /** The fields of a request body (or of an object whose fields are reported by their own names). */
    public static JsonFields of(ObjectNode object) {
        return new JsonFields(object, "", null);
    }

    /** The fields of {@code object}, the value of {@code field}: a refusal names {@code field.key} and param {@code field}. */
    public static JsonFields within(ObjectNode object, String field) {
        return new JsonFields(object, field + ".", field);
    }

    public ObjectNode object() {
        return object;
    }

    /** The value of {@code field}, or null when it is absent or JSON null. */
    public JsonNode given(String field) {
        JsonNode v = object.get(field);
        return v == null || v.isNull() ? null : v;
    }

    public Integer optInt(String field, int min, int max) {
        JsonNode v = given(field);
        if (v == null) {
            return null;
        }
        if (!v.isIntegralNumber() || !v.canConvertToInt()) {
            throw wrongType(field, "an integer", v);
        }
        int i = v.asInt();
        if (i < min || i > max) {
            throw ApiException.badRequest(param(field), prefix + field + ": must be " + (max == Integer.MAX_VALUE ? ">= " + min
                    : "between " + min + " and " + max) + ", got " + i);
        }
        return i;
    }

    public boolean optBool(String field, boolean otherwise) {
        JsonNode v = given(field);
        if (v == null) {
            return otherwise;
        }
        if (!v.isBoolean()) {
            throw wrongType(field, "a boolean", v);
        }
        return v.asBoolean();
    }

    public Double optNumber(String field, double min, double max) {
        JsonNode v = given(field);
        if (v == null) {
            return null;
        }
        if (!v.isNumber()) {
            throw wrongType(field, "a number", v);
        }
        double d = v.asDouble();
        if (d < min || d > max) {
            throw ApiException.badRequest(param(field), prefix + field + ": must be between " + min + " and " + max + ", got " + d);
        }
        return d;
    }

    public String optString(String field) {
        JsonNode v = given(field);
        if (v == null) {
            return null;
        }
        if (!v.isTextual()) {
            throw wrongType(field, "a string", v);
        }
        return v.asText();
    }

    /** The 400 for {@code field} holding {@code got} where {@code what} (say "a list of strings") was expected. */
    public ApiException wrongType(String field, String what, JsonNode got) {
        return ApiException.badRequest(param(field), prefix + field + ": expected " + what + ", got " + describe(got));
    }

    private String param(String field) {
        return param == null ? field : param;
    }

    /** A value as a refusal shows it: its JSON type and its text, cut at 40 characters. */
    public static String describe(JsonNode v) {
        String type = v.isTextual() ? "string" : v.isBoolean() ? "boolean" : v.isNumber() ? "number" : v.isArray() ? "array"
                : v.isObject() ? "object" : "null";
        String text = v.toString();
        return type + " " + (text.length() > 40 ? text.substring(0, 40) + "..." : text);
    }
}
