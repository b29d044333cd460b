package dev.infersim.workload;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.util.List;

/**
 * Finds the line of the YAML node a Jackson error path points to. Jackson reports where its parser stood when the
 * error surfaced, which for records built from a whole mapping is the mapping's end; walking the tokens again
 * along the path gives the line of the offending key itself.
 */
final class YamlLocator {

    private static final YAMLFactory YAML = new YAMLFactory();

    private YamlLocator() {
    }

    /** The 1-based line of the node at {@code path}, or -1 when the path cannot be followed. */
    static int lineOf(String yaml, List<JsonMappingException.Reference> path) {
        try (JsonParser p = YAML.createParser(yaml)) {
            if (p.nextToken() == null) {
                return -1;
            }
            int line = p.currentTokenLocation().getLineNr();
            for (JsonMappingException.Reference ref : path) {
                if (ref.getFieldName() != null && p.currentToken() == JsonToken.START_OBJECT) {
                    line = enterField(p, ref.getFieldName());
                } else if (ref.getIndex() >= 0 && p.currentToken() == JsonToken.START_ARRAY) {
                    line = enterElement(p, ref.getIndex());
                } else {
                    return line;
                }
                if (line < 0) {
                    return -1;
                }
            }
            return line;
        } catch (IOException e) {
            return -1;
        }
    }

    /** Moves to the value of {@code field}; returns the line of its key. */
    private static int enterField(JsonParser p, String field) throws IOException {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            int line = p.currentTokenLocation().getLineNr();
            boolean match = p.currentName().equals(field);
            p.nextToken();
            if (match) {
                return line;
            }
            p.skipChildren();
        }
        return -1;
    }

    /** Moves to element {@code index}; returns its line. */
    private static int enterElement(JsonParser p, int index) throws IOException {
        for (int i = 0; p.nextToken() != JsonToken.END_ARRAY; i++) {
            if (p.currentToken() == null) {
                return -1;
            }
            if (i == index) {
                return p.currentTokenLocation().getLineNr();
            }
            p.skipChildren();
        }
        return -1;
    }
}
