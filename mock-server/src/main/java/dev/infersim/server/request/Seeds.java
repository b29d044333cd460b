package dev.infersim.server.request;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.server.json.ApiException;
import dev.infersim.server.json.JsonFields;

import java.math.BigInteger;

/**
 * seed as vLLM reads it: a signed 64-bit integer by pydantic's lax rules, so an integral float (42.0), a string of
 * digits ("42") or a boolean (0 or 1) is that integer, while a fraction or other text is a 400 naming the field; and
 * -1, which SamplingParams takes as no seed at all.
 */
final class Seeds {
    private static final String FIELD = "seed";
    private static final BigInteger MIN = BigInteger.valueOf(Long.MIN_VALUE);
    private static final BigInteger MAX = BigInteger.valueOf(Long.MAX_VALUE);

    private Seeds() {
    }

    /** The seed, or null when absent, null or -1. */
    static Long of(JsonFields fields) {
        JsonNode s = fields.given(FIELD);
        if (s == null) {
            return null;
        }
        BigInteger value = integer(s);
        if (value == null) {
            throw fields.wrongType(FIELD, "an integer", s);
        }
        if (value.compareTo(MIN) < 0 || value.compareTo(MAX) > 0) {
            throw ApiException.badRequest(FIELD, "seed: must be a 64-bit signed integer, got " + value);
        }
        long seed = value.longValue();
        return seed == -1 ? null : seed;
    }

    private static BigInteger integer(JsonNode s) {
        try {
            if (s.isIntegralNumber()) {
                return s.bigIntegerValue();
            }
            if (s.isFloatingPointNumber()) {
                return s.decimalValue().toBigIntegerExact();
            }
            if (s.isBoolean()) {
                return s.asBoolean() ? BigInteger.ONE : BigInteger.ZERO;
            }
            if (s.isTextual()) {
                return new BigInteger(s.asText().trim());
            }
        } catch (ArithmeticException | NumberFormatException notAnInteger) {
            return null;
        }
        return null;
    }
}
