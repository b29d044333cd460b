package dev.infersim.workload;

import dev.infersim.common.InputFile;
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
        InputFile.requireReadable("--dataset-path", kind, path);
    }
}
