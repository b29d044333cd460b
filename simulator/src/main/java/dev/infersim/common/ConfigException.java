package dev.infersim.common;

/**
 * A configuration problem a user can fix: a bad flag value, an unknown profile name, a malformed YAML file,
 * a deployment that does not fit. The message is one line that names the culprit and says why.
 */
public final class ConfigException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ConfigException(String message) {
        super(message);
    }

    public ConfigException(String message, Throwable cause) {
        super(message, cause);
    }

    /** Throws a ConfigException with {@code String.format(format, args)} unless {@code condition} holds. */
    public static void check(boolean condition, String format, Object... args) {
        if (!condition) {
            throw new ConfigException(String.format(java.util.Locale.ROOT, format, args));
        }
    }
}
