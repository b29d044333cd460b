package dev.infersim.cli;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.KubernetesResource;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Strict checks of Kubernetes objects. Typed ones: fabric8's model classes keep unknown fields in additionalProperties
 * rather than failing, so after parsing every nested model object must have none. Custom resources fabric8 has no
 * class for are checked against a shape written from their API's Go types: a map of field names (a trailing "!" marks
 * a required one, "*" stands for any key) to the shape of the value: "string", "int", "bool", "string-map", a
 * {@code Set} of allowed strings, a one-element {@code List} for arrays, a nested map for objects, or a fabric8 class.
 */
final class StrictShape {
    static final ObjectMapper JSON = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    private StrictShape() {
    }

    /** Parses {@code node} into {@code type} and fails on any field the type does not know, naming its path. */
    static <T> T typed(JsonNode node, Class<T> type, String path) {
        T value;
        try {
            value = JSON.treeToValue(node, type);
        } catch (Exception e) {
            throw new AssertionError(path + ": not a valid " + type.getSimpleName() + ": " + e.getMessage(), e);
        }
        noUnknownFields(value, path);
        return value;
    }

    private static void noUnknownFields(Object value, String path) {
        if (value instanceof List<?> list) {
            for (int i = 0; i < list.size(); i++) {
                noUnknownFields(list.get(i), path + "[" + i + "]");
            }
            return;
        }
        if (value instanceof Map<?, ?> map) {
            map.forEach((k, v) -> noUnknownFields(v, path + "." + k));
            return;
        }
        if (!(value instanceof KubernetesResource)) {
            return;
        }
        for (Method getter : value.getClass().getMethods()) {
            if (getter.getParameterCount() != 0 || getter.getDeclaringClass() == Object.class
                    || !(getter.getName().startsWith("get") || getter.getName().startsWith("is"))) {
                continue;
            }
            Object field;
            try {
                field = getter.invoke(value);
            } catch (ReflectiveOperationException e) {
                throw new AssertionError(e);
            }
            if (getter.getName().equals("getAdditionalProperties")) {
                if (field instanceof Map<?, ?> extra && !extra.isEmpty()) {
                    throw new AssertionError(path + ": unknown field(s) " + extra.keySet());
                }
            } else {
                noUnknownFields(field, path + "." + fieldName(getter.getName()));
            }
        }
    }

    private static String fieldName(String getter) {
        String name = getter.startsWith("is") ? getter.substring(2) : getter.substring(3);
        return name.isEmpty() ? name : Character.toLowerCase(name.charAt(0)) + name.substring(1);
    }

    /** Checks {@code node} against {@code shape} (see the class doc), naming the path of the first mismatch. */
    static void check(JsonNode node, Object shape, String path) {
        if (shape instanceof Class<?> type) {
            typed(node, type, path);
        } else if (shape instanceof Set<?> allowed) {
            expect(node.isTextual() && allowed.contains(node.asText()), path, "one of " + allowed, node);
        } else if (shape instanceof List<?> item) {
            expect(node.isArray(), path, "a list", node);
            for (int i = 0; i < node.size(); i++) {
                check(node.get(i), item.get(0), path + "[" + i + "]");
            }
        } else if (shape instanceof Map<?, ?> fields) {
            checkObject(node, fields, path);
        } else {
            switch ((String) shape) {
                case "string" -> expect(node.isTextual(), path, "a string", node);
                case "int" -> expect(node.isIntegralNumber(), path, "an integer", node);
                case "bool" -> expect(node.isBoolean(), path, "true or false", node);
                case "string-map" -> {
                    expect(node.isObject(), path, "a map of strings", node);
                    node.fields().forEachRemaining(e -> expect(e.getValue().isTextual(), path + "." + e.getKey(),
                            "a string", e.getValue()));
                }
                default -> throw new IllegalArgumentException("unknown shape " + shape);
            }
        }
    }

    private static void checkObject(JsonNode node, Map<?, ?> fields, String path) {
        expect(node.isObject(), path, "an object", node);
        List<String> known = new ArrayList<>();
        for (Map.Entry<?, ?> field : fields.entrySet()) {
            String key = (String) field.getKey();
            boolean required = key.endsWith("!");
            String name = required ? key.substring(0, key.length() - 1) : key;
            known.add(name);
            if (name.equals("*")) {
                node.fields().forEachRemaining(e -> check(e.getValue(), field.getValue(), path + "." + e.getKey()));
            } else if (node.has(name)) {
                check(node.get(name), field.getValue(), path + "." + name);
            } else if (required) {
                throw new AssertionError(path + ": missing required field " + name);
            }
        }
        if (!known.contains("*")) {
            for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
                String name = names.next();
                if (!known.contains(name)) {
                    throw new AssertionError(path + ": unknown field " + name + " (known: " + known + ")");
                }
            }
        }
    }

    private static void expect(boolean ok, String path, String what, JsonNode got) {
        if (!ok) {
            throw new AssertionError(path + ": expected " + what + ", got " + got);
        }
    }
}
