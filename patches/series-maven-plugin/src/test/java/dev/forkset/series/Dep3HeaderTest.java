package dev.forkset.series;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.Set;
import org.junit.Test;

public class Dep3HeaderTest {
  private static final Set<String> MODULES = Set.of("hbase-pmem-cache", "hazelcast-eviction");

  private static String header(String upstream, String forwarded, String module) {
    return "Subject: HBASE-1 Do a thing\nUpstream: " + upstream + "\nForwarded: " + forwarded
        + "\nModule: " + module + "\nDescription: first line\n continued\n\n--- a/x\n";
  }

  @Test
  public void parse_completeHeader_readsEveryField() throws Exception {
    Dep3Header h = Dep3Header.parse("p", header("HBASE-21738", "no", "hbase-pmem-cache"), MODULES);
    assertEquals("HBASE-1 Do a thing", h.subject());
    assertEquals("HBASE-21738", h.upstream());
    assertEquals("hbase-pmem-cache", h.module());
    assertEquals("first line\ncontinued", h.fields().get("Description"));
    assertEquals(0, h.maxOffset());
  }

  @Test
  public void parse_acceptsGithubIssuesUrlsAndNone() throws Exception {
    Dep3Header.parse("p", header("hazelcast/hazelcast#15715",
        "https://github.com/hazelcast/hazelcast/pull/1", "hazelcast-eviction"), MODULES);
    Dep3Header.parse("p", header("none", "not-needed", "none"), MODULES);
  }

  @Test
  public void parse_missingField_namesIt() {
    expectFailure("Subject: x\nUpstream: none\nModule: none\n\n", "'Forwarded:'");
  }

  @Test
  public void parse_unknownModule_listsTheModules() {
    expectFailure(header("none", "no", "hbase-typo"), "hbase-typo");
  }

  @Test
  public void parse_badUpstreamAndForwarded_sayWhatIsAccepted() {
    expectFailure(header("soon", "no", "none"), "issue id");
    expectFailure(header("none", "maybe", "none"), "'no', 'not-needed'");
  }

  private static void expectFailure(String text, String expected) {
    try {
      Dep3Header.parse("0001-x.patch", text, MODULES);
      fail("should fail: " + text);
    } catch (PatchFailure e) {
      assertTrue(e.getMessage(), e.getMessage().contains("0001-x.patch"));
      assertTrue(e.getMessage(), e.getMessage().contains(expected));
    }
  }
}
