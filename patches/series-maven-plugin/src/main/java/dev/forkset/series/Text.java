package dev.forkset.series;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Text as git sees it: UTF-8 decoded strictly (a malformed byte is an error, never a U+FFFD), and
 * lines split at {@code \n} only, each keeping its terminator, so CRLF lines and a last line
 * without a newline survive a round trip byte for byte.
 */
final class Text {
  private Text() {}

  /**
   * Decodes {@code bytes} as UTF-8 or fails naming {@code what}, the line and the byte offset of
   * the first malformed sequence.
   */
  static String utf8(byte[] bytes, String what) throws PatchFailure {
    CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT);
    try {
      return decoder.decode(ByteBuffer.wrap(bytes)).toString();
    } catch (CharacterCodingException e) {
      int offset = firstMalformed(bytes);
      int line = 1;
      for (int i = 0; i < offset; i++) {
        if (bytes[i] == '\n') {
          line++;
        }
      }
      throw new PatchFailure(what + ": line " + line + " (byte " + offset + ", 0x"
          + String.format("%02X", bytes[offset] & 0xff) + ") is not valid UTF-8. Patches and the"
          + " upstream sources they change are read as UTF-8 and nothing is replaced; save the"
          + " file as UTF-8 (git format-patch writes what the repository holds).");
    }
  }

  private static int firstMalformed(byte[] bytes) {
    CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT);
    ByteBuffer in = ByteBuffer.wrap(bytes);
    java.nio.CharBuffer out = java.nio.CharBuffer.allocate(bytes.length + 1);
    CoderResult r = decoder.decode(in, out, true);
    return r.isError() ? in.position() : bytes.length - 1;
  }

  /** The lines of {@code text}, each with its {@code \n}; the last one may lack it. */
  static List<String> lines(String text) {
    List<String> out = new ArrayList<>();
    int start = 0;
    while (start < text.length()) {
      int nl = text.indexOf('\n', start);
      if (nl < 0) {
        out.add(text.substring(start));
        break;
      }
      out.add(text.substring(start, nl + 1));
      start = nl + 1;
    }
    return out;
  }

  /** The lines of {@code text} without their {@code \n} (a {@code \r} before it stays). */
  static List<String> rawLines(String text) {
    List<String> out = new ArrayList<>();
    for (String l : lines(text)) {
      out.add(l.endsWith("\n") ? l.substring(0, l.length() - 1) : l);
    }
    return out;
  }
}
