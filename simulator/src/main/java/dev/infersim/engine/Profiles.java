package dev.infersim.engine;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Loads GPU and model profiles by bundled name ({@code h100}, {@code llama-3.1-8b}) from {@code configs/} on the
 * classpath, or from a YAML file path. Errors name the file, the line and the field.
 */
public final class Profiles {
    public static final List<String> BUNDLED_GPUS = List.of("h100", "h200", "a100-80g", "l40s", "l4", "mi300x", "b200");
    public static final List<String> BUNDLED_MODELS = List.of(
            "llama-3.1-8b", "llama-3.1-70b", "qwen2.5-1.5b", "qwen2.5-7b", "mistral-7b", "mixtral-8x7b");

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
        if (nameOrPath.endsWith(".yaml") || nameOrPath.endsWith(".yml") || Files.isRegularFile(file)) {
            ConfigException.check(Files.isRegularFile(file), "%s: file %s does not exist", flag, nameOrPath);
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
        try {
            T value = YAML.readValue(in, type);
            ConfigException.check(value != null, "%s: file is empty", source);
            return value;
        } catch (JsonMappingException e) {
            throw new ConfigException(describe(source, e), e);
        } catch (JsonProcessingException e) {
            throw new ConfigException(source + locate(e.getLocation()) + ": malformed YAML: " + e.getOriginalMessage(), e);
        } catch (ConfigException e) {
            throw new ConfigException(source + ": " + e.getMessage(), e);
        } catch (IOException e) {
            throw new ConfigException(source + ": " + e.getMessage(), e);
        }
    }

    private static String describe(String source, JsonMappingException e) {
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
        return source + locate(e.getLocation()) + (field.isEmpty() ? "" : ": field '" + field + "'") + ": "
                + message.replace('\n', ' ');
    }

    private static String locate(JsonLocation location) {
        return location == null || location.getLineNr() < 0 ? "" : ":" + location.getLineNr();
    }
}
