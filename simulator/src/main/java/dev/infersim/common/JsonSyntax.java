package dev.infersim.common;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;

/**
 * One clean line for a JSON syntax error in a user's file. Jackson's own message ends with a multi-line
 * "[Source: REDACTED ...; line: L, column: C]" block; the original message and the location say the same in a form
 * that fits the {@code file:line:column: why} convention of the other errors.
 */
public final class JsonSyntax {

    private JsonSyntax() {
    }

    /** {@code ":line:column"} of the error, or an empty string when Jackson knows no location. */
    public static String location(JsonProcessingException e) {
        JsonLocation at = e.getLocation();
        if (at == null || at.getLineNr() < 1) {
            return "";
        }
        return ":" + at.getLineNr() + (at.getColumnNr() > 0 ? ":" + at.getColumnNr() : "");
    }

    /** What is wrong, without the source excerpt, on one line. */
    public static String reason(JsonProcessingException e) {
        String message = e.getOriginalMessage();
        return message == null ? "syntax error" : message.replaceAll("\\s+", " ").trim();
    }
}
