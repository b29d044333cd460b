package dev.infersim.workload;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.infersim.common.ConfigException;
import dev.infersim.common.InputFile;
import dev.infersim.workload.length.LengthLaws;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Loads {@link WorkloadProfile}s by bundled name ({@code chat}, {@code matrix-row-e}) from {@code configs/workloads/}
 * on the classpath, or from a YAML file. Every failure is a {@link ConfigException} whose message names the file,
 * the line and the field, e.g. {@code chat.yaml:12: field 'classes[0].weight': weight must be finite and > 0}.
 */
public final class WorkloadProfiles {

    /** The profiles bundled in configs/workloads/. */
    public static final List<String> BUNDLED = List.of(
            "chat", "code", "long-context-qa", "summarization", "chat-rag-mix", "burst", "lora-tenants",
            "matrix-row-a", "matrix-row-b", "matrix-row-c", "matrix-row-d", "matrix-row-e", "matrix-row-f");

    // Optional fields are boxed and may be absent, so unlike engine profiles missing creator properties are allowed.
    private static final ObjectMapper YAML = JsonMapper.builder(new YAMLFactory())
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .addModule(LengthLaws.module())
            .build();

    private WorkloadProfiles() {
    }

    /** A bundled profile by name, or a YAML file when the argument ends in .yaml/.yml or names an existing file. */
    public static WorkloadProfile load(String nameOrPath) {
        if (nameOrPath == null || nameOrPath.isBlank()) {
            throw new ConfigException("--workload: a profile name or YAML path is required");
        }
        Path file = Path.of(nameOrPath);
        if (nameOrPath.endsWith(".yaml") || nameOrPath.endsWith(".yml") || Files.exists(file)) {
            InputFile.requireReadable("--workload", "file", file);
            try (InputStream in = Files.newInputStream(file)) {
                return parse(in, nameOrPath);
            } catch (IOException e) {
                throw new ConfigException("--workload: cannot read " + nameOrPath + ": " + e.getMessage(), e);
            }
        }
        String resource = "configs/workloads/" + nameOrPath + ".yaml";
        try (InputStream in = WorkloadProfiles.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new ConfigException("--workload: unknown profile '" + nameOrPath + "'; bundled: "
                        + String.join(", ", BUNDLED) + "; or give a path to a YAML file");
            }
            return parse(in, resource);
        } catch (IOException e) {
            throw new ConfigException("--workload: cannot read bundled " + resource + ": " + e.getMessage(), e);
        }
    }

    /** Parses a profile; {@code source} names it in error messages. */
    public static WorkloadProfile parse(InputStream in, String source) {
        String text;
        try {
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new ConfigException(source + ": " + e.getMessage(), e);
        }
        try {
            WorkloadProfile profile = YAML.readValue(text, WorkloadProfile.class);
            if (profile == null) {
                throw new ConfigException(source + ": file is empty");
            }
            return profile;
        } catch (JsonMappingException e) {
            throw new ConfigException(describe(source, text, e), e);
        } catch (JsonProcessingException e) {
            throw new ConfigException(source + line(e.getLocation()) + ": malformed YAML: "
                    + e.getOriginalMessage().replaceAll("\\s+", " "), e);
        }
    }

    private static String describe(String source, String text, JsonMappingException e) {
        StringBuilder field = new StringBuilder();
        for (JsonMappingException.Reference ref : e.getPath()) {
            if (ref.getFieldName() != null) {
                field.append(field.length() == 0 ? "" : ".").append(ref.getFieldName());
            } else if (ref.getIndex() >= 0) {
                field.append('[').append(ref.getIndex()).append(']');
            }
        }
        int line = YamlLocator.lineOf(text, e.getPath());
        String where = line > 0 ? ":" + line : line(e.getLocation());
        return source + where + (field.length() == 0 ? "" : ": field '" + field + "'") + ": " + reason(e);
    }

    /** The user-facing reason: our own validation message when there is one, else Jackson's first sentence. */
    private static String reason(JsonMappingException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof IllegalArgumentException || t instanceof ConfigException) {
                return t.getMessage();
            }
            if (t instanceof JsonParseException syntax) {
                return "malformed YAML: " + syntax.getOriginalMessage().replaceAll("\\s+", " ");
            }
        }
        String message = e.getOriginalMessage();
        int cut = message.indexOf(" (");
        if (message.startsWith("Unrecognized field") && cut > 0) {
            message = message.substring(0, cut);
        }
        return message.replace('\n', ' ');
    }

    private static String line(JsonLocation location) {
        return location == null || location.getLineNr() < 0 ? "" : ":" + location.getLineNr();
    }
}
