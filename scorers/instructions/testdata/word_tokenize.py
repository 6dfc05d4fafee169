"""Writes word_tokenize.jsonl: what NLTK's word_tokenize (Punkt sentence
split, then NLTKWordTokenizer) gives on a set of texts, for the Go port's
test (wordtok_test.go). The texts: the 156 published PaLM 2 responses
(ifeval_responses_palm2_156.jsonl), 60 responses of IFBench's
sample_output.jsonl (allenai/IFBench, Apache 2.0), and hand-written cases
aimed at each rule of the tokenizer.

Run with Debian's python3-nltk (3.8) and NLTK's Punkt English model, which is
no Debian package: build it as bench/ifeval/make_punkt.py says, then

  NLTK_DATA=DIR /usr/bin/python3 word_tokenize.py [IFBench sample_output.jsonl] > word_tokenize.jsonl
"""
import json, sys
import nltk

HAND = [
    "Good muffins cost $3.88 (roughly 3,36 euros)\nin New York.  Please buy me\ntwo of them.\nThanks.",
    "I cannot go. You gotta see it, gimme that, lemme go, we're gonna wanna leave.",
    "They'll say \"hello\" and 'goodbye' -- then leave... or not?!",
    "'Tis the season; 'twas the night. D'ye know? More'n enough.",
    "She said, «Bonjour» and “hi” and ‘yo’ and „na“.",
    "The U.S.A. is big. Mr. Smith went to Washington, D.C. on Jan. 5th.",
    "Email me at a@b.com #hashtag 50% & more: 10:30, 1,000 items;",
    "(Parens) [brackets] {braces} <angles> and ``quotes'' too.",
    "It's John's book, isn't it? I'm sure you'd like it, you've seen it.",
    "WON'T SHE'S I'M THEY'RE CAN'T SHAN'T Y'ALL O'CLOCK",
    "End with a quote.\" Another one.' And \"this.\"",
    "**Bold** and *italic* text; a-b-c and x--y and ---.",
    "Numbers: 3.14, -2, +7, 1e10, 2/3, 4:5, 6,7.",
    "Ellipsis... in the middle.. and end....",
    "Question? Exclamation! Both?! Interrobang‽",
    "A sentence ending with a period inside parens (like this.) Next.",
    "Hyphenated-word and under_score and apostrophe's.",
    "Unicode: naïve café résumé — dash – en dash … ellipsis.",
    "Tabs\tand\nnewlines\n\nand  double  spaces.",
    "\"Quoted start\" and 'single start'",
    "He said 'hello' then 'world'.",
    "Contractions at end: don't",
    "Title: Something Great: Part II",
    "whaddya whatcha wanna",
    "THE END.",
    "",
    "   ",
    "a",
    ".",
    "...",
    "Dr. No. St. Louis. Inc. Ltd.",
    "1. First item\n2. Second item\n3. Third item",
    "* bullet one\n* bullet two\n- dash item",
    "<<Title>> and <i>thesis</i>",
    "She/her/hers pronouns.",
    "My Answer: yes. My Conclusion: no. Future Outlook: maybe.",
    "The price is $5.00.Then we left.",
    "Is it 'quoted'? Yes 'it' is.",
    "'s 'm 'd 'll n't alone",
    "Go!!! Now??? Please...",
]

def main():
    texts = [json.loads(l)["response"] for l in open("ifeval_responses_palm2_156.jsonl")]
    if len(sys.argv) > 1:
        texts += [json.loads(l)["response"] for l in open(sys.argv[1])][:60]
    texts += HAND
    for t in texts:
        print(json.dumps({"text": t, "tokens": nltk.word_tokenize(t)}, ensure_ascii=False))

main()
