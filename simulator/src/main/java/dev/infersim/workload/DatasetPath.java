package dev.infersim.workload;

import dev.infersim.common.ConfigException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The check every file-backed dataset makes first, so a bad {@code --dataset-path} says what is wrong with it. */
final class DatasetPath {

    private DatasetPath() {
    }

    /**
     * Refuses a path that is no readable regular file.
     *
     * @param kind what the file should hold, for the message ("ShareGPT file", "trace file")
     */
    static void requireFile(Path path, String kind) {
        ConfigException.check(!Files.isDirectory(path), "--dataset-path: %s is a directory; give the %s itself",
                path, kind);
        ConfigException.check(Files.isRegularFile(path), "--dataset-path: %s %s does not exist", kind, path);
        ConfigException.check(Files.isReadable(path), "--dataset-path: %s %s is not readable", kind, path);
    }
}
