package dev.infersim.engine;

import dev.infersim.engine.profile.OptionalField;
import dev.infersim.engine.profile.GpuProfile;
import dev.infersim.engine.profile.ModelProfile;
import dev.infersim.common.ConfigException;
import dev.infersim.common.InputFile;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.lang.reflect.RecordComponent;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Loads GPU and model profiles by bundled name ({@code h100}, {@code llama-3.1-8b}) from {@code configs/} on the
 * classpath, or from a YAML file path. Errors name the file, the line and the field.
 */
public final class Profiles {
    public static final List<String> BUNDLED_GPUS = List.of("h100", "h200", "a100-80g", "l40s", "l4", "mi300x", "b200");
    public static final List<String> BUNDLED_MODELS = List.of(
            "llama-3.1-8b", "llama-3.1-70b", "qwen2.5-1.5b", "qwen2.5-7b", "mistral-7b", "mixtral-8x7b", "e5-mistral-7b",
            "llama-2-7b", "llama-2-70b", "codellama-34b", "llama-3.1-405b", "qwen2-vl-7b");

    private static final ObjectMapper YAML = JsonMapper.builder(new YAMLFactory())
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.FAIL_ON_MISSING_CREATOR_PROPERTIES)
            .build();

    private Profiles() {
    }

    public static GpuProfile gpu(String nameOrPath) {
        return load(nameOrPath, "gpus", "--gpu", BUNDLED_GPUS, GpuProfile.class);
    }

    public static ModelProfile model(String nameOrPath) {
        return load(nameOrPath, "models", "--model", BUNDLED_MODELS, ModelProfile.class);
    }

    /** The mapper used for every infersim YAML file: strict about unknown and missing fields. */
    public static ObjectMapper yaml() {
        return YAML;
    }

    /**
     * Reads a bundled profile {@code configs/<dir>/<name>.yaml} or a YAML file.
     *
     * @param flag    the flag the name came from, for the error message
     * @param bundled the names to list when the name is unknown
     */
    public static <T> T load(String nameOrPath, String dir, String flag, List<String> bundled, Class<T> type) {
        ConfigException.check(nameOrPath != null && !nameOrPath.isBlank(), "%s is required", flag);
        Path file = Path.of(nameOrPath);
        if (nameOrPath.endsWith(".yaml") || nameOrPath.endsWith(".yml") || Files.exists(file)) {
            InputFile.requireReadable(flag, "file", file);
            try (InputStream in = Files.newInputStream(file)) {
                return parse(in, nameOrPath, type);
            } catch (IOException e) {
                throw new ConfigException(flag + ": cannot read " + nameOrPath + ": " + e.getMessage(), e);
            }
        }
        String resource = "configs/" + dir + "/" + nameOrPath + ".yaml";
        try (InputStream in = Profiles.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new ConfigException(String.format("%s: unknown name '%s'; bundled: %s; or give a path to a YAML file",
                        flag, nameOrPath, String.join(", ", bundled)));
            }
            return parse(in, resource, type);
        } catch (IOException e) {
            throw new ConfigException(flag + ": cannot read bundled " + resource + ": " + e.getMessage(), e);
        }
    }

    /** Parses YAML into {@code type}; a failure names the source, line and field. */
    public static <T> T parse(InputStream in, String source, Class<T> type) {
        String text = "";
        try {
            text = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            JsonNode tree = YAML.readTree(text);
            ConfigException.check(tree != null && !tree.isMissingNode() && !tree.isNull(), "%s: file is empty", source);
            if (type.isRecord() && tree.isObject()) {
                for (RecordComponent c : type.getRecordComponents()) {
                    String field = fieldName(type, c);
                    if (c.isAnnotationPresent(OptionalField.class) && !tree.has(field)) {
                        ((com.fasterxml.jackson.databind.node.ObjectNode) tree).putNull(field);
                    }
                }
            }
            checkFieldNames(tree, text, source, type);
            return YAML.treeToValue(tree, type);
        } catch (JsonMappingException e) {
            throw new ConfigException(describe(source, text, e), e);
        } catch (JsonProcessingException e) {
            throw new ConfigException(source + locate(e.getLocation()) + ": malformed YAML: " + e.getOriginalMessage(), e);
        } catch (IOException e) {
            throw new ConfigException(source + ": " + e.getMessage(), e);
        }
    }

    /** A record component's name in YAML: its {@code @JsonProperty} name, else its own. */
    private static String fieldName(Class<?> type, RecordComponent c) {
        JsonProperty p = fieldAnnotation(type, c.getName());
        return p != null ? p.value() : c.getName();
    }

    /** Names an unknown (often misspelt) or missing top-level field of a record, with its line. */
    private static void checkFieldNames(JsonNode tree, String text, String source, Class<?> type) {
        if (!type.isRecord() || !tree.isObject()) {
            return;
        }
        List<String> known = new ArrayList<>();
        for (RecordComponent c : type.getRecordComponents()) {
            known.add(fieldName(type, c));
        }
        for (Iterator<String> it = tree.fieldNames(); it.hasNext(); ) {
            String field = it.next();
            ConfigException.check(known.contains(field), "%s:%d: unknown field '%s'; expected: %s",
                    source, lineOf(text, field), field, String.join(", ", known));
        }
        for (String field : known) {
            ConfigException.check(tree.has(field), "%s: missing field '%s'", source, field);
        }
    }

    private static JsonProperty fieldAnnotation(Class<?> type, String field) {
        try {
            return type.getDeclaredField(field).getAnnotation(JsonProperty.class);
        } catch (NoSuchFieldException e) {
            return null;
        }
    }

    private static int lineOf(String text, String field) {
        String[] lines = text.split("\\R", -1);
        for (int i = 0; i < lines.length; i++) {
            if (lines[i].startsWith(field + ":")) {
                return i + 1;
            }
        }
        return 1;
    }

    private static String describe(String source, String text, JsonMappingException e) {
        if (e.getCause() instanceof ConfigException invalid) {
            return source + ": " + invalid.getMessage();
        }
        String field = e.getPath().stream()
                .map(r -> r.getFieldName() != null ? r.getFieldName() : "[" + r.getIndex() + "]")
                .collect(Collectors.joining("."));
        String message = e.getOriginalMessage();
        int cut = message.indexOf(" (");
        if (message.startsWith("Unrecognized field") && cut > 0) {
            message = message.substring(0, cut);
        }
        String line = e.getLocation() != null && e.getLocation().getLineNr() > 0 ? locate(e.getLocation())
                : e.getPath().isEmpty() || e.getPath().get(0).getFieldName() == null ? ""
                : ":" + lineOf(text, e.getPath().get(0).getFieldName());
        return source + line + (field.isEmpty() ? "" : ": field '" + field + "'") + ": "
                + message.replace('\n', ' ');
    }

    private static String locate(JsonLocation location) {
        return location == null || location.getLineNr() < 0 ? "" : ":" + location.getLineNr();
    }
}
