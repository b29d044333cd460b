package dev.infersim.cli.options;

import picocli.CommandLine;
import picocli.CommandLine.Help;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Lists a command's options in the sections of {@link OptionGroup} (picocli's help-section API), each under its heading
 * in declaration order, the rest ("Other options", then help and version) after them: {@code serve} and {@code simulate}
 * have 80 to 100 options, which one alphabetical list buries. A command none of whose options is grouped keeps
 * picocli's plain list.
 */
public final class GroupedHelp implements CommandLine.IHelpSectionRenderer {
    private static final String OTHER = "Other options";
    private static final String HELP = "Help";

    private GroupedHelp() {
    }

    /** Lists the options of every sub-command of {@code cli} in sections where it has grouped ones. */
    public static void install(CommandLine cli) {
        cli.getSubcommands().values().forEach(sub -> {
            if (sub.getCommandSpec().options().stream().anyMatch(o -> group(o) != null)) {
                sub.getHelpSectionMap().put(CommandLine.Model.UsageMessageSpec.SECTION_KEY_OPTION_LIST_HEADING, help -> "");
                sub.getHelpSectionMap().put(CommandLine.Model.UsageMessageSpec.SECTION_KEY_OPTION_LIST, new GroupedHelp());
            }
        });
    }

    @Override
    public String render(Help help) {
        CommandSpec spec = help.commandSpec();
        Map<OptionGroup, List<OptionSpec>> grouped = new EnumMap<>(OptionGroup.class);
        List<OptionSpec> other = new ArrayList<>();
        List<OptionSpec> standard = new ArrayList<>();
        for (OptionSpec o : spec.options()) {
            if (o.hidden()) {
                continue;
            }
            OptionGroup g = group(o);
            if (g != null) {
                grouped.computeIfAbsent(g, k -> new ArrayList<>()).add(o);
            } else if (o.usageHelp() || o.versionHelp()) {
                standard.add(o);
            } else {
                other.add(o);
            }
        }
        StringBuilder out = new StringBuilder();
        grouped.forEach((g, options) -> section(out, help, g.heading, options));
        section(out, help, OTHER, other);
        section(out, help, HELP, standard);
        return out.toString();
    }

    /** The section of {@code option}: its field's, else its class's; null for neither (picocli's own, or ungrouped). */
    static OptionGroup group(OptionSpec option) {
        if (!(option.userObject() instanceof Field field)) {
            return null;
        }
        OptionGroup.In in = field.getAnnotation(OptionGroup.In.class);
        if (in == null) {
            in = field.getDeclaringClass().getAnnotation(OptionGroup.In.class);
        }
        return in == null ? null : in.value();
    }

    private static void section(StringBuilder out, Help help, String heading, List<OptionSpec> options) {
        if (options.isEmpty()) {
            return;
        }
        // a layout per section (one accumulates the rows it is given), its columns as wide as all options need
        out.append("\n").append(heading).append(":\n")
                .append(help.optionListExcludingGroups(options, help.createDefaultLayout(), null, help.createDefaultParamLabelRenderer()));
    }
}
