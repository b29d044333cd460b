package dev.infersim.engine.profile;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A field of a profile's YAML that may be left out (it then reads as null), where {@link dev.infersim.engine.Profiles} otherwise requires
 * every field: one added to a profile after users wrote their own files, such as a model's vision encoder.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.RECORD_COMPONENT)
public @interface OptionalField {
}
