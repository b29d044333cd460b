package dev.infersim.result;

import com.fasterxml.jackson.annotation.JacksonAnnotationsInside;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;

import java.io.IOException;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A double of a result that may have no value: NaN (and an infinity) written as JSON null, which every JSON reader
 * takes, and null read back as NaN. Put on a record component; for a map's values, name {@link Writer} and
 * {@link Reader} as {@code contentUsing} of {@code @JsonSerialize} and {@code @JsonDeserialize}.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.FIELD, ElementType.METHOD, ElementType.PARAMETER, ElementType.RECORD_COMPONENT})
@JacksonAnnotationsInside
@JsonSerialize(using = NonFiniteAsNull.Writer.class)
@JsonDeserialize(using = NonFiniteAsNull.Reader.class)
public @interface NonFiniteAsNull {

    /** Writes a finite double as a number, anything else as null. */
    final class Writer extends JsonSerializer<Double> {
        @Override
        public void serialize(Double value, JsonGenerator out, SerializerProvider provider) throws IOException {
            if (Double.isFinite(value)) {
                out.writeNumber(value);
            } else {
                out.writeNull();
            }
        }
    }

    /** Reads a number as itself and null as NaN. */
    final class Reader extends JsonDeserializer<Double> {
        @Override
        public Double deserialize(JsonParser in, DeserializationContext context) throws IOException {
            return in.getDoubleValue();
        }

        @Override
        public Double getNullValue(DeserializationContext context) {
            return Double.NaN;
        }
    }
}
