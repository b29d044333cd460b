package dev.infersim.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** The rows of a per-request JSONL file, in request order (the file holds them in the order requests ended). */
final class DetailRows {
    private static final ObjectMapper JSON = new ObjectMapper();

    private DetailRows() {
    }

    static List<JsonNode> read(Path file) throws IOException {
        List<JsonNode> rows = new ArrayList<>();
        for (String line : Files.readAllLines(file)) {
            if (!line.isBlank()) {
                rows.add(JSON.readTree(line));
            }
        }
        rows.sort(Comparator.comparingLong(n -> n.get("index").asLong()));
        return rows;
    }
}
