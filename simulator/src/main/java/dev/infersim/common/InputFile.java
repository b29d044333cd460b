package dev.infersim.common;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The check every file a flag names makes before it is read, so that the one line says what is wrong with it: missing,
 * a directory, something other than a regular file ({@code /dev/zero}, a pipe, which a reader would read forever), or
 * unreadable.
 */
public final class InputFile {
    private InputFile() {
    }

    /**
     * Refuses {@code path} unless it is a readable regular file.
     *
     * @param flag the flag that named it ("--dataset-path")
     * @param kind what it should hold ("trace file"), for the message
     */
    public static void requireReadable(String flag, String kind, Path path) {
        ConfigException.check(Files.exists(path), "%s: %s %s does not exist", flag, kind, path);
        ConfigException.check(!Files.isDirectory(path), "%s: %s is a directory; give the %s itself", flag, path, kind);
        ConfigException.check(Files.isRegularFile(path), "%s: %s is not a regular file (a device or a pipe); give the %s itself",
                flag, path, kind);
        ConfigException.check(Files.isReadable(path), "%s: %s %s is not readable", flag, kind, path);
    }
}
