package dev.infersim.cli.options;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.common.ConfigException;
import dev.infersim.engine.Profiles;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The flags of a {@code serve --config FILE} or {@code simulate --config FILE}: YAML keys are flag names without the
 * leading dashes ({@code max-num-seqs} or {@code max_num_seqs}), values their values, a list for a flag taking several.
 * The command is parsed again from them followed by the command line's arguments, leaving out each flag the command
 * line sets itself (it wins, even for a flag taking several values, which picocli would otherwise extend), so a value
 * from the file is converted and bounded as the same flag typed. An error about a value from the file is reworded to
 * name the file and the key, as the flag alone would send the user looking at a command line that does not hold it.
 */
public final class ConfigFile {
    /** A message about one flag starts with its name, as every validation in infersim words it. */
    private static final Pattern LEADING_FLAG = Pattern.compile("^(--[a-z0-9-]+)[\\s:,]*(.*)$", Pattern.DOTALL);
    private static final Pattern PICOCLI_VALUE = Pattern.compile("^Invalid value for option '[^']*': (.*)$", Pattern.DOTALL);

    private final Path file;
    private final CommandSpec spec;
    private final List<String> args = new ArrayList<>();
    /** The key as the file spells it, by the longest name of the option it sets. */
    private final Map<String, String> keys = new HashMap<>();

    private ConfigFile(Path file, CommandSpec spec) {
        this.file = file;
        this.spec = spec;
    }

    /** Reads {@code file} against the options of {@code spec}, the command as the command line gave it. */
    public static ConfigFile read(Path file, CommandSpec spec) {
        Set<String> setOnCommandLine = matched(spec.commandLine().getParseResult());
        ConfigFile config = new ConfigFile(file, spec);
        for (Iterator<Map.Entry<String, JsonNode>> it = mapping(file).fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            config.add(e.getKey(), e.getValue(), setOnCommandLine);
        }
        return config;
    }

    /** The file's flags as command-line arguments. */
    List<String> args() {
        return args;
    }

    /**
     * {@code fresh}, a new instance of the command, parsed from the file's flags followed by the command line's
     * arguments (without {@code --config}), with the same conversions and bounds as the command line.
     */
    public <T> T parse(T fresh) {
        List<String> all = new ArrayList<>(args);
        List<String> original = spec.commandLine().getParseResult().originalArgs();
        int start = original.indexOf(spec.name()) + 1; // the list starts with the parent command's arguments
        for (int i = start; i < original.size(); i++) {
            String a = original.get(i);
            if (a.equals("--config")) {
                i++;
            } else if (!a.startsWith("--config=")) {
                all.add(a);
            }
        }
        CommandLine cli = new CommandLine(fresh).setOverwrittenOptionsAllowed(true);
        OptionLimits.register(cli);
        try {
            OptionLimits.check(cli.parseArgs(all.toArray(String[]::new)));
        } catch (CommandLine.ParameterException e) {
            throw attribute(e);
        }
        return fresh;
    }

    /** {@code e} as a ConfigException naming the file and key when it is about a value from the file, else {@code e}. */
    public RuntimeException attribute(RuntimeException e) {
        String message = String.valueOf(e.getMessage());
        String flag = null;
        String why = message;
        if (e instanceof CommandLine.ParameterException p && p.getArgSpec() instanceof OptionSpec o) {
            flag = o.longestName();
            Matcher m = PICOCLI_VALUE.matcher(message);
            why = m.matches() ? m.group(1) : message;
        } else {
            Matcher m = LEADING_FLAG.matcher(message);
            if (m.matches()) {
                OptionSpec o = spec.findOption(m.group(1));
                flag = o == null ? null : o.longestName();
                why = m.group(2);
            }
        }
        String key = flag == null ? null : keys.get(flag);
        return key == null ? e : new ConfigException(where(key) + ": " + why, e);
    }

    private void add(String key, JsonNode value, Set<String> setOnCommandLine) {
        String flag = "--" + key.replace('_', '-');
        if (flag.equals("--config")) {
            throw new ConfigException(where() + ": a config file cannot name another config file");
        }
        OptionSpec option = spec.findOption(flag);
        if (option == null) {
            throw new ConfigException(where(key) + ": no such flag of infersim " + spec.name());
        }
        // YAML's empty value ('api-key:' or '~') means "not set here"; passing it on would make the text "null" the
        // flag's value (an API key "null", or a type error for a number).
        if (value.isNull() || setOnCommandLine.contains(option.longestName())) {
            return;
        }
        keys.put(option.longestName(), key);
        if (value.isBoolean()) {
            args.add(value.asBoolean() ? flag : "--no-" + flag.substring(2));
        } else if (value.isArray() && option.isMultiValue()) {
            // an item may be a mapping, as vLLM's JSON form of --lora-modules: it goes on as JSON
            value.forEach(item -> args.add(flag + "=" + (item.isContainerNode() ? item.toString() : item.asText())));
        } else if (value.isArray()) {
            List<String> items = new ArrayList<>();
            value.forEach(item -> items.add(item.asText()));
            args.add(flag + "=" + String.join(",", items));
        } else {
            args.add(flag + "=" + value.asText());
        }
    }

    private static JsonNode mapping(Path file) {
        JsonNode root;
        try {
            root = Profiles.yaml().readTree(Files.readString(file));
        } catch (NoSuchFileException e) {
            // Its message is the bare path, which read as if the path itself were the complaint.
            throw new ConfigException("--config " + file + ": no such file");
        } catch (IOException e) {
            throw new ConfigException("--config " + file + ": " + e.getMessage().lines().findFirst().orElse("unreadable"));
        }
        if (root == null || !root.isObject()) {
            throw new ConfigException("--config " + file + ": expected a YAML mapping of flag names to values");
        }
        return root;
    }

    /** The longest names of the options a parse matched. */
    private static Set<String> matched(CommandLine.ParseResult parsed) {
        return parsed.matchedOptions().stream().map(OptionSpec::longestName).collect(Collectors.toSet());
    }

    private String where() {
        return "--config " + file;
    }

    private String where(String key) {
        return where() + ": " + key;
    }
}
