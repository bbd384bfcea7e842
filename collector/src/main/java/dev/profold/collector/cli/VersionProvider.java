package dev.profold.collector.cli;

import picocli.CommandLine;

/** Reports the version from the jar manifest. */
public final class VersionProvider implements CommandLine.IVersionProvider {
  @Override
  public String[] getVersion() {
    String v = Main.class.getPackage().getImplementationVersion();
    return new String[] {"profold " + (v == null ? "(development build)" : v)};
  }
}
