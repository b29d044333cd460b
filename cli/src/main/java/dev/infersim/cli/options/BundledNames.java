package dev.infersim.cli.options;

import dev.infersim.engine.Profiles;
import dev.infersim.workload.WorkloadProfiles;

import java.util.List;

/**
 * The bundled profiles' names as every command's help lists them, from the one registry of each ({@link Profiles},
 * {@link WorkloadProfiles}), so a profile added there is in the help at once. picocli wraps a description at any
 * punctuation ("qwen2." then "5-1.5b" on the next line), so the names are laid out here in lines short enough for the
 * help's description column, and handed to the descriptions through system properties ({@code ${sys:...}}).
 */
public final class BundledNames {
    static final String GPUS = "infersim.help.gpus";
    static final String MODELS = "infersim.help.models";
    static final String WORKLOADS = "infersim.help.workloads";
    /** The description column of picocli's 80-column help, less a margin. */
    static final int WIDTH = 48;

    private BundledNames() {
    }

    /** Sets the properties the help's descriptions read. */
    public static void publish() {
        System.setProperty(GPUS, lines(Profiles.BUNDLED_GPUS));
        System.setProperty(MODELS, lines(Profiles.BUNDLED_MODELS));
        System.setProperty(WORKLOADS, lines(WorkloadProfiles.BUNDLED));
    }

    /** The names, comma-separated, in lines of at most {@value #WIDTH} characters. */
    static String lines(List<String> names) {
        StringBuilder all = new StringBuilder();
        int line = 0;
        for (int i = 0; i < names.size(); i++) {
            String name = names.get(i) + (i < names.size() - 1 ? "," : "");
            if (line > 0 && line + 1 + name.length() > WIDTH) {
                all.append('\n');
                line = 0;
            } else if (line > 0) {
                all.append(' ');
                line++;
            }
            all.append(name);
            line += name.length();
        }
        return all.toString();
    }
}
