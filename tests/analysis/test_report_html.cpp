// report.html's pieces: escaping, the one report model both outputs are written
// from, Markdown inline text as HTML, and gnuplot's SVG made safe to inline.
#include "analysis/presentation/html_escape.hpp"
#include "analysis/presentation/html_history.hpp"
#include "analysis/presentation/html_svg.hpp"
#include "analysis/presentation/html_tables.hpp"
#include "analysis/presentation/report_model.hpp"

#include <gtest/gtest.h>

using namespace ringscale::analysis;

TEST(report_html, escapes_every_markup_character) {
    EXPECT_EQ(html_text("<script>a&b</script>"), "&lt;script&gt;a&amp;b&lt;/script&gt;");
    EXPECT_EQ(html_text("\"onmouseover='x'"), "&quot;onmouseover=&#39;x&#39;");
    EXPECT_EQ(html_text("a\x1b[2Jb"), "a\\x1b[2Jb"); // a control character as text
    EXPECT_EQ(html_text("\xff"), "\\xff");           // invalid UTF-8 as text
}

TEST(report_html, anchors_are_stable_and_plain) {
    EXPECT_EQ(html_anchor("series", "k"), html_anchor("series", "k"));
    EXPECT_NE(html_anchor("series", "k"), html_anchor("series", "j"));
    EXPECT_EQ(html_slug("Per-rank heatmaps"), "per-rank-heatmaps");
    EXPECT_EQ(html_slug("<script>"), "script");
    EXPECT_EQ(html_slug("!!"), "section");
    EXPECT_TRUE(html_safe_href("history_series.csv"));
    EXPECT_TRUE(html_safe_href("#series-0123"));
    EXPECT_FALSE(html_safe_href("javascript:alert(1)"));
    EXPECT_FALSE(html_safe_href("https://example.com/x"));
    EXPECT_FALSE(html_safe_href("../secret"));
    EXPECT_FALSE(html_safe_href("/etc/passwd"));
}

TEST(report_html, markdown_round_trips_through_the_model) {
    const std::string md = "# Title\n\n## At a glance\n\nA paragraph\non two lines.\n\n- one\n- "
                           "two\n\n| a | b \\| c |\n|---|---|\n| 1 | 2 |\n\n![x](plot_01.png)\n\n"
                           "## At a glance\n\nagain\n";
    const report_model m = read_report_model(md);
    EXPECT_EQ(markdown_of(m), md);
    ASSERT_EQ(m.blocks.size(), 8u);
    EXPECT_EQ(m.blocks[1].id, "at-a-glance");
    EXPECT_EQ(m.blocks[6].id, "at-a-glance-2"); // unique anchors
    EXPECT_EQ(m.blocks[2].kind, block_kind::paragraph);
    EXPECT_EQ(m.blocks[3].kind, block_kind::list);
    EXPECT_EQ(m.blocks[4].kind, block_kind::table);
    EXPECT_EQ(m.blocks[5].kind, block_kind::plot);
    EXPECT_EQ(m.blocks[5].text, "plot_01");
    EXPECT_EQ(table_cells("| a | b \\| c |"), (std::vector<std::string>{"a", "b \\| c"}));
}

TEST(report_html, inline_markdown_is_escaped_and_links_stay_local) {
    EXPECT_EQ(html_inline("**fast** `x<y` a\\<b"),
              "<strong>fast</strong> <code>x&lt;y</code> a&lt;b");
    EXPECT_EQ(html_inline("[csv](history_series.csv)"), "<a href=\"history_series.csv\">csv</a>");
    EXPECT_EQ(html_inline("[x](javascript:alert(1))"), "[x](javascript:alert(1))");
    EXPECT_EQ(html_inline("**open"), "<strong>open</strong>"); // tags always balanced
}

TEST(report_html, gnuplot_svg_keeps_no_script_and_gets_escaped_hover) {
    const std::string svg =
        "<?xml version=\"1.0\"?>\n<svg width=\"10\" id=\"gnuplot_svg\"><defs><circle "
        "id=\"gpPt6\"/></defs><script>bad()</script><g id=\"gnuplot_plot_2\" ><title>marked "
        "launch</title><use xlink:href='#gpPt6'/></g><g "
        "onmousemove=\"gnuplot_svg.showHypertext(evt,'h0')\" "
        "onmouseout=\"gnuplot_svg.hideHypertext()\"><title> </title><path onclick=\"x()\" "
        "d=\"M0\"/></g></svg>\n";
    const std::string out = inline_svg(svg, "p1", {{"h0", "a <b> & \"c\""}});
    EXPECT_EQ(out.find("<script"), std::string::npos);
    EXPECT_EQ(out.find("onmouse"), std::string::npos);
    EXPECT_EQ(out.find("onclick"), std::string::npos);
    EXPECT_NE(out.find("<g class=\"hv\"><title>a &lt;b&gt; &amp; &quot;c&quot;</title>"),
              std::string::npos);
    EXPECT_NE(out.find("id=\"p1-gpPt6\""), std::string::npos);
    EXPECT_NE(out.find("'#p1-gpPt6'"), std::string::npos);
    EXPECT_NE(out.find("<g class=\"marked\" id=\"p1-gnuplot_plot_2\""), std::string::npos);
    EXPECT_EQ(out.rfind("<svg", 0), 0u);
    EXPECT_EQ(inline_svg("not an svg", "p"), "");
}

TEST(report_html, gnuplot_svg_is_compacted_without_touching_text) {
    const std::string svg =
        "<svg width=\"900\">\n<title>Gnuplot</title>\n<desc>Produced by GNUPLOT 5.4 </desc>\n"
        "<defs>\n\t<circle id='gpPt5' r='1'/>\n\t<use xlink:href='#gpPt5' id='gpPt6'/>\n"
        "\t<path id='gpPt7' d='M0,-1.33'/>\n\t<filter id='textbox' x='0'>\n\t  <feFlood/>\n"
        "\t</filter>\n</defs>\n<g fill=\"none\" color=\"black\" stroke=\"black\">\n</g>\n"
        "<g onmousemove=\"gnuplot_svg.showHypertext(evt,'k0')\"><title> </title>\n"
        "\t<use xlink:href='#gpPt6' transform='translate(54.53,202.50) scale(2.25)'/></g>\n"
        "\t<path d='M-60.56,245.04 L878.99,245.00' stroke-width='0.267'/>\n"
        "<g font-family=\"Sans\"><text><tspan font-family=\"Sans\" >1.25 ms</tspan></text></g>"
        "\n</svg>";
    const std::string out = inline_svg(svg, "t1", {{"k0", "median 12.34 ms [1.25, 2.50]"}});
    EXPECT_EQ(out.find("gpPt7"), std::string::npos); // defs nothing uses
    EXPECT_EQ(out.find("textbox"), std::string::npos);
    EXPECT_NE(out.find("<circle id='gpPt5'"), std::string::npos); // used through gpPt6
    EXPECT_NE(out.find("<use href='#gpPt6' transform='translate(54.5,202.5) scale(2.3)'/>"),
              std::string::npos);
    EXPECT_NE(out.find("d='M-60.6,245 L879,245'"), std::string::npos);
    EXPECT_NE(out.find("stroke-width='0.267'"), std::string::npos); // three decimals kept
    EXPECT_NE(out.find("<title>median 12.34 ms [1.25, 2.50]</title>"), std::string::npos);
    EXPECT_NE(out.find("<text>1.25 ms</text>"), std::string::npos);
    EXPECT_EQ(out.find("Gnuplot"), std::string::npos);
    EXPECT_EQ(out.find("GNUPLOT"), std::string::npos);
    EXPECT_EQ(out.find("stroke=\"black\">\n</g>"), std::string::npos); // empty style group
    EXPECT_EQ(out.find('\t'), std::string::npos);
}

TEST(report_html, a_compared_case_links_to_its_series_or_says_it_has_none) {
    // A hostile case key: the anchor is its hash, the link's text the series' escaped env.
    const std::string key = "job|<script>\"onmouseover=|P=2|nodes=1x2";
    ringscale::analysis::history::series_set set;
    set.all.resize(3);
    set.all[0].key = key + "\nenv A";
    set.all[0].env = "<b>A</b>";
    set.all[1].key = key + "x\nenv A"; // another case whose key starts with this one's
    set.all[2].key = key + "\nenv B";
    set.all[2].env = "B";
    const std::string cell = compared_series_html(&set, key);
    EXPECT_NE(cell.find("<a href=\"#" + series_anchor(set.all[0]) +
                        "\">trend, 0 launch(es) on "
                        "&lt;b&gt;A&lt;/b&gt;</a>"),
              std::string::npos)
        << cell;
    EXPECT_NE(cell.find("#" + series_anchor(set.all[2]) + "\""), std::string::npos);
    EXPECT_EQ(cell.find(series_anchor(set.all[1])), std::string::npos);
    EXPECT_EQ(cell.find("<script"), std::string::npos);
    EXPECT_EQ(compared_series_html(&set, "job|other|P=2|nodes=1x2"),
              "no series on this page (not in the history)");
    EXPECT_EQ(compared_series_html(nullptr, key), "no series on this page (no --history)");
}

TEST(report_html, a_markdown_table_takes_the_pages_own_column) {
    const html_column extra{"series", {{"<a href=\"#s-1\">trend</a>"}}, {"compared-1"}};
    const std::string h =
        html_table_of_markdown({"| case | P |", "|---|---|", "| a | 1 |", "| b | 2 |"}, &extra);
    EXPECT_NE(h.find("<th>P</th><th>series</th>"), std::string::npos) << h;
    EXPECT_NE(h.find("<tr id=\"compared-1\" data-f=\"a\"><td>a</td><td data-v=\"1\">1</td><td>"
                     "<a href=\"#s-1\">trend</a></td></tr>"),
              std::string::npos)
        << h;
    EXPECT_NE(h.find("<tr data-f=\"b\"><td>b</td><td data-v=\"2\">2</td><td></td></tr>"),
              std::string::npos)
        << h; // a row past the column's cells: an empty cell, no anchor
}
