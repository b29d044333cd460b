package dev.infersim.result;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.BeanProperty;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import com.fasterxml.jackson.databind.deser.ContextualDeserializer;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.util.Iterator;
import java.util.Map;

/**
 * Reads a record written with {@code @JsonUnwrapped} components back from its one flat JSON object, which Jackson does
 * not do for creator parameters: each unwrapped component is read from the same object (its keys after the unwrapping
 * prefix, without it; other keys ignored), every other component from its own key (its {@code @JsonProperty} name,
 * else its name under the record's {@code @JsonNaming}); an unwrapped record none of whose keys the object has is
 * null, as it was when written. Put on a record with
 * {@code @JsonDeserialize(using = FlatRecordReader.class)}; type parameters are resolved from the type being read.
 */
public final class FlatRecordReader extends JsonDeserializer<Object> implements ContextualDeserializer {
    private final JavaType type;

    public FlatRecordReader() {
        this(null);
    }

    private FlatRecordReader(JavaType type) {
        this.type = type;
    }

    @Override
    public JsonDeserializer<?> createContextual(DeserializationContext context, BeanProperty property) {
        return new FlatRecordReader(context.getContextualType());
    }

    @Override
    public Object deserialize(JsonParser in, DeserializationContext context) throws IOException {
        JsonNode flat = in.readValueAsTree();
        Class<?> raw = type.getRawClass();
        RecordComponent[] components = raw.getRecordComponents();
        Object[] values = new Object[components.length];
        Class<?>[] types = new Class<?>[components.length];
        for (int i = 0; i < components.length; i++) {
            RecordComponent c = components[i];
            types[i] = c.getType();
            JavaType componentType = context.getTypeFactory().resolveMemberType(c.getGenericType(), type.getBindings());
            JsonUnwrapped unwrapped = c.getAccessor().getAnnotation(JsonUnwrapped.class);
            JsonNode value = unwrapped == null || !unwrapped.enabled() ? flat.get(jsonName(c, raw))
                    : absent(withoutPrefix(flat, unwrapped.prefix()), componentType.getRawClass()) ? null
                    : withoutPrefix(flat, unwrapped.prefix());
            values[i] = value == null || value.isNull() ? context.findRootValueDeserializer(componentType).getNullValue(context)
                    : context.readTreeAsValue(value, componentType);
        }
        try {
            Constructor<?> canonical = raw.getDeclaredConstructor(types);
            canonical.setAccessible(true);
            return canonical.newInstance(values);
        } catch (InvocationTargetException e) {
            throw JsonMappingException.from(in, "cannot read " + raw.getSimpleName() + ": " + e.getCause().getMessage(),
                    e.getCause());
        } catch (ReflectiveOperationException e) {
            throw JsonMappingException.from(in, "cannot construct " + raw.getSimpleName(), e);
        }
    }

    /**
     * Whether an unwrapped record is absent from the object: it has none of the record's keys (a record that reads
     * itself, with its own deserializer, decides for itself).
     */
    private static boolean absent(JsonNode part, Class<?> type) {
        if (!type.isRecord() || type.isAnnotationPresent(JsonDeserialize.class)) {
            return false;
        }
        for (RecordComponent c : type.getRecordComponents()) {
            if (part.has(jsonName(c, type))) {
                return false;
            }
        }
        return true;
    }

    /** The keys of {@code flat} that start with {@code prefix}, without it (all of them for no prefix). */
    private static JsonNode withoutPrefix(JsonNode flat, String prefix) {
        if (prefix.isEmpty()) {
            return flat;
        }
        ObjectNode part = ResultJson.mapper().createObjectNode();
        for (Iterator<Map.Entry<String, JsonNode>> it = flat.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (e.getKey().startsWith(prefix)) {
                part.set(e.getKey().substring(prefix.length()), e.getValue());
            }
        }
        return part;
    }

    /** A component's key: its {@code @JsonProperty} name, else its name as the record's naming strategy writes it. */
    private static String jsonName(RecordComponent c, Class<?> record) {
        JsonProperty named = c.getAccessor().getAnnotation(JsonProperty.class);
        if (named != null && !named.value().isEmpty()) {
            return named.value();
        }
        JsonNaming naming = record.getAnnotation(JsonNaming.class);
        if (naming == null) {
            return c.getName();
        }
        try {
            return ((PropertyNamingStrategies.NamingBase) naming.value().getDeclaredConstructor().newInstance())
                    .translate(c.getName());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("naming strategy of " + record, e);
        }
    }
}
