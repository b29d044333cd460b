package dev.infersim.server.config;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.server.json.Json;

import java.io.IOException;

/**
 * One item of vLLM's {@code --lora-modules}: an adapter served from start-up. vLLM's parser ({@code LoRAParserAction})
 * takes {@code name=path}, or a JSON object {@code {"name": .., "path": .., "base_model_name": ..}}. infersim only
 * records the path: it names the adapter's {@code root} in {@code /v1/models}; nothing is read from it.
 *
 * @param name          the model name requests use to run on the adapter
 * @param path          where vLLM would load it from
 * @param baseModelName the adapter's {@code parent} in {@code /v1/models}; null for the first served model name
 */
public record LoraModule(String name, String path, String baseModelName) {

    public LoraModule {
        if (name == null || name.isBlank() || path == null || path.isBlank()) {
            throw new IllegalArgumentException("--lora-modules: an adapter needs a name and a path");
        }
    }

    /** Parses one {@code --lora-modules} item as vLLM does. */
    public static LoraModule parse(String item) {
        String s = item.trim();
        if (s.contains("=") && !s.contains(",") && !s.startsWith("{")) {
            int eq = s.indexOf('=');
            return new LoraModule(s.substring(0, eq).trim(), s.substring(eq + 1).trim(), null);
        }
        JsonNode node;
        try {
            node = Json.MAPPER.readTree(s);
        } catch (IOException e) {
            throw new IllegalArgumentException("--lora-modules: invalid JSON format: " + item);
        }
        if (node == null || !node.isObject() || !node.path("name").isTextual() || !node.path("path").isTextual()) {
            throw new IllegalArgumentException("--lora-modules: invalid fields (need \"name\" and \"path\" strings): " + item);
        }
        JsonNode base = node.get("base_model_name");
        return new LoraModule(node.get("name").asText(), node.get("path").asText(),
                base == null || base.isNull() ? null : base.asText());
    }
}
