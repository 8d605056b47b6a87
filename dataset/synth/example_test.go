package synth

import "fmt"

// The examples show one generated program of each kind and pin it: go test
// fails when the generator's stream changes. The golden files in testdata/
// hold many more (TestGolden, TestScriptGolden).

func ExampleGenerate() {
	ps := Generate(1, 0, 3)
	fmt.Print(ps[0].Source)
	for _, p := range ps {
		fmt.Println("#", p.Call)
	}
	// Output:
	// def f(array, strings):
	//     memo = dict(zip(', '.join(strings), array))
	//     if 3 in array:
	//         return array
	//     memo = {ch: j for j, ch in enumerate('-'.join(strings))}
	//     memo.update({'.': 6})
	//     strings.extend('B'.splitlines())
	//     return list(memo.values())
	// # f([4, 2], ['hello', 'code', '12'])
	// # f([21, 10, 7, 4, 6, -3, 3], ['bar', 'x', 'world', '_', 'Zed'])
	// # f([12, 3, 1, 4], [])
}

func ExampleGenerateScript() {
	p := GenerateScript(1, 0)
	fmt.Print(p.Source)
	// Output:
	// temps = [7, 15, 15]
	// INVENTORY = {'alpha': 0, 'item': 10}
	// def cumulative(values):
	//     total = 0
	//     for v in values:
	//         total += v
	//         yield total
	// def main():
	//     picked = list(filter(lambda x: x % 2 == 1, temps))
	//     print(f'filtered: {picked}')
	//     ranking = sorted(INVENTORY.items(), key=lambda kv: kv[1], reverse=True)
	//     print(f'ranking: {ranking}')
	//     stream = cumulative(temps)
	//     first = next(stream, None)
	//     nxt = next(stream, None)
	//     print(f'first two: {first}, {nxt}')
	//
	// if __name__ == "__main__":
	//     main()
}
