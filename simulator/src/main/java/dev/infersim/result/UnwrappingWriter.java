package dev.infersim.result;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.util.NameTransformer;

import java.io.IOException;

/**
 * A Jackson serializer of a part of a result that writes the part's keys straight into the enclosing object: the part
 * is always unwrapped ({@link JsonSerializer#isUnwrappingSerializer()}), and each key goes through the names of every
 * {@code @JsonUnwrapped} around it (their prefixes, chained as Jackson's
 * {@link NameTransformer#chainedTransformer} does). A subclass writes the field names and values, each name through
 * the transformer it is given.
 */
abstract class UnwrappingWriter<T> extends JsonSerializer<T> {
    private final NameTransformer names;

    /** The writer Jackson builds from {@code @JsonSerialize(using = ...)}: no prefix yet. */
    UnwrappingWriter() {
        this(NameTransformer.NOP);
    }

    private UnwrappingWriter(NameTransformer names) {
        this.names = names;
    }

    /** Writes the part's keys and values into the open object, each key through {@code names}. */
    abstract void write(T part, JsonGenerator out, NameTransformer names) throws IOException;

    @Override
    public final boolean isUnwrappingSerializer() {
        return true;
    }

    @Override
    public final JsonSerializer<T> unwrappingSerializer(NameTransformer unwrapper) {
        UnwrappingWriter<T> keys = this;
        return new UnwrappingWriter<>(NameTransformer.chainedTransformer(unwrapper, names)) {
            @Override
            void write(T part, JsonGenerator out, NameTransformer names) throws IOException {
                keys.write(part, out, names);
            }
        };
    }

    @Override
    public final void serialize(T part, JsonGenerator out, SerializerProvider provider) throws IOException {
        write(part, out, names);
    }
}
