"""Writes pycsv.jsonl: what Python's csv.reader (excel dialect, the
delimiter given) reads from a set of texts, or "error" where it raises, for
TestPyCSV. The texts aim at each state of CPython's reader, plus IFBench's
CSV test inputs and those texts with every '"' tripled, as IFBench's CSV
checkers read them.

  /usr/bin/python3 pycsv.py > pycsv.jsonl
"""
import csv, io, json

TEXTS = [
    "", "\n", "\n\n", "a", "a\n", "a,b\nc,d", "a,b\nc,d\n", "a,,b,", ",", ",\n,",
    '"a,b",c', '"a\nb",c\nd', '"a""b"', '"a"b,c', 'a"b",c', '"unterminated', '"unterminated\nnext',
    "a\r\nb", "a\rb", "a\r", "\r\n", "x\n\ny", '"q"\r\n', 'a,"b\r\nc",d', "a\x00b",
    'ProductID,Category,Brand,Price,Stock\n7,Home Decor,"Pottery Barn, Inc.",99.99,150',
    'a\tb\t"c"\t "d"', '"StudentID"\t "Subject"\t "Grade"', '  "x" ,y', '"",""', '"""",a',
    "ID,Country,City,Year,Count\n1,France,Paris,2020,5\n", "é,ü\n漢字,\"字\"",
]

def read(text, delim):
    try:
        return list(csv.reader(io.StringIO(text), delimiter=delim))
    except csv.Error:
        return "error"

for t in TEXTS + [t.replace('"', '"""') for t in TEXTS]:
    for d in (",", "\t"):
        print(json.dumps({"text": t, "delimiter": d, "rows": read(t, d)}, ensure_ascii=False))
