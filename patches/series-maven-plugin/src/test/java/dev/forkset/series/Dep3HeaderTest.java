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

  @Test
  public void parse_appliedUpstream_readsTheRelease() throws Exception {
    String h = header("HBASE-21738", "not-needed", "none");
    assertEquals(null, Dep3Header.parse("p", h, MODULES).appliedUpstream());
    assertEquals("2.1.3", Dep3Header.parse("p", "Applied-Upstream: 2.1.3\n" + h, MODULES)
        .appliedUpstream());
    assertEquals("2.1.3", Dep3Header.parse("p",
        "Applied-Upstream: 2.1.3, https://github.com/apache/hbase/commit/abc\n" + h, MODULES)
        .appliedUpstream());
  }

  @Test
  public void parse_appliedUpstreamWithoutARelease_saysWhatIsAccepted() {
    String h = header("HBASE-21738", "not-needed", "none");
    expectFailure("Applied-Upstream: commit:abc\n" + h, "must start with the upstream release");
    expectFailure("Applied-Upstream: 2.1.3\nApplied-Upstream: 2.1.4\n" + h, "given twice");
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

  // --- git format-patch mails ------------------------------------------------------------------

  private static final String DIFF = "diff --git a/x b/x\nindex 1234567..89abcde 100644\n--- a/x\n";

  private static String mail(String headers, String body) {
    return "From 5c1e4a4f0e6b1e0e4f3f2a1b0c9d8e7f6a5b4c3d Mon Sep 17 00:00:00 2001\n" + headers
        + "\n" + body + "---\n x | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n\n"
        + DIFF;
  }

  @Test
  public void parse_mail_readsSubjectAuthorDescriptionAndFields() throws Exception {
    Dep3Header h = Dep3Header.parse("p", mail(
        "From: =?UTF-8?q?Zo=C3=AB=20D?= <z@example.org>\nDate: Tue, 4 Nov 2025 10:00:00 +0000\n"
            + "Subject: [PATCH] HBASE-1 A subject long enough that git folds it onto a\n"
            + " second line\nMIME-Version: 1.0\nContent-Type: text/plain; charset=UTF-8\n"
            + "Content-Transfer-Encoding: 8bit\n",
        "Why, first paragraph.\n\nSecond paragraph.\n\nUpstream: HBASE-1\nForwarded: no\n"
            + "Module: hbase-pmem-cache\nMax-Offset: 2\n"), MODULES);
    assertEquals(Dep3Header.Form.MAIL, h.form());
    assertEquals("HBASE-1 A subject long enough that git folds it onto a second line", h.subject());
    assertEquals("Zo\u00eb D <z@example.org>", h.author());
    assertEquals("Tue, 4 Nov 2025 10:00:00 +0000", h.date());
    assertEquals(java.util.List.of("Why, first paragraph.", "", "Second paragraph."),
        h.description());
    assertEquals("HBASE-1", h.upstream());
    assertEquals("hbase-pmem-cache", h.module());
    assertEquals(2, h.maxOffset());
  }

  @Test
  public void parse_mail_withoutFieldsParagraph_saysWhereTheFieldsGo() {
    expectFailure(mail("From: a <a@b>\nDate: Tue, 4 Nov 2025 10:00:00 +0000\nSubject: [PATCH] x\n",
        "Just prose, no fields.\n"), "last paragraph of the message holds the DEP-3 fields");
  }

  @Test
  public void parse_mail_missingField_namesIt() {
    expectFailure(mail("From: a <a@b>\nDate: Tue, 4 Nov 2025 10:00:00 +0000\nSubject: [PATCH] x\n",
        "Upstream: none\nModule: none\n"), "no 'Forwarded:' field");
  }

  @Test
  public void parse_mail_withoutFromOrDate_failsAsGitAmWould() {
    expectFailure(mail("Date: Tue, 4 Nov 2025 10:00:00 +0000\nSubject: [PATCH] x\n",
        "Upstream: none\nForwarded: no\nModule: none\n"), "'From:'");
  }

  @Test
  public void parse_mail_textBetweenSeparatorAndDiff_isNotSkipped() {
    String text = mail("From: a <a@b>\nDate: Tue, 4 Nov 2025 10:00:00 +0000\nSubject: [PATCH] x\n",
        "Upstream: none\nForwarded: no\nModule: none\n").replace("\n\ndiff --git",
        "\nsomething else\ndiff --git");
    expectFailure(text, "'something else' between '---' and the diff");
  }

  @Test
  public void parse_mail_fieldGivenTwice_fails() {
    expectFailure(mail("From: a <a@b>\nDate: Tue, 4 Nov 2025 10:00:00 +0000\nSubject: [PATCH] x\n",
        "Upstream: none\nForwarded: no\nForwarded: not-needed\nModule: none\n"),
        "'Forwarded:' is given twice");
  }

  @Test
  public void parse_oldForm_isReadAsSuch() throws Exception {
    assertEquals(Dep3Header.Form.DEP3_FIRST,
        Dep3Header.parse("p", header("none", "no", "none"), MODULES).form());
  }
}
