package dev.forkset.hbase21.jvm;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.util.jar.JarFile;
import java.util.jar.Manifest;

/** Reads the patch list that the patch pipeline writes into a custom jar's manifest. */
final class ForksetManifest {
  /** Manifest attribute listing the applied patches; absent in stock jars. */
  static final String PATCHES = "Forkset-Patches";

  private ForksetManifest() {}

  /** The jar's {@value #PATCHES} attribute, or "none" for a stock jar or a directory. */
  static String patches(URL codeSource) throws IOException {
    File f;
    try {
      f = new File(codeSource.toURI());
    } catch (URISyntaxException e) {
      throw new IOException(e);
    }
    if (!f.isFile()) {
      return "none";
    }
    try (JarFile jar = new JarFile(f)) {
      Manifest m = jar.getManifest();
      String v = m == null ? null : m.getMainAttributes().getValue(PATCHES);
      return v == null || v.trim().isEmpty() ? "none" : v.trim();
    }
  }
}
