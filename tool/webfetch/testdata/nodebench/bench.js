// Reference pipeline for BenchmarkConvertArticle2MB: Mozilla Readability on
// jsdom, then Turndown (with the GFM plugin for tables), on the same page.
// Usage: node bench.js PAGE.html [ITERATIONS]
// Run it from a directory where @mozilla/readability, jsdom, turndown and
// turndown-plugin-gfm are installed (see README.md).
const fs = require("fs");
const { JSDOM } = require("jsdom");
const { Readability } = require("@mozilla/readability");
const TurndownService = require("turndown");
const { gfm } = require("turndown-plugin-gfm");

const file = process.argv[2];
const iterations = Number(process.argv[3] || 5);
const html = fs.readFileSync(file, "utf8");
const bytes = Buffer.byteLength(html);

function convert() {
  const dom = new JSDOM(html, { url: "https://news.example.com/2024/05/report.html" });
  const article = new Readability(dom.window.document).parse();
  const td = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced" });
  td.use(gfm);
  const md = td.turndown(article.content);
  if (!md.includes("Part 1:")) throw new Error("article not extracted");
  return md;
}

convert(); // warm up
const times = [];
for (let i = 0; i < iterations; i++) {
  const t0 = process.hrtime.bigint();
  convert();
  times.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
times.sort((a, b) => a - b);
const median = times[Math.floor(times.length / 2)];
console.log(`readability+turndown (node ${process.version}): ${bytes} bytes, median ${median.toFixed(0)} ms/page over ${iterations} runs, ${(bytes / 1e6 / (median / 1000)).toFixed(2)} MB/s`);
