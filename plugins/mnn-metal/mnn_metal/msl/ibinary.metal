#include <metal_stdlib>
#include <simd/simd.h>

using namespace metal;

constant uint _36_tmp [[function_constant(0)]];
constant uint _36 = is_function_constant_defined(_36_tmp) ? _36_tmp : 1u;
constant uint _37_tmp [[function_constant(1)]];
constant uint _37 = is_function_constant_defined(_37_tmp) ? _37_tmp : 1u;
constant uint _38_tmp [[function_constant(2)]];
constant uint _38 = is_function_constant_defined(_38_tmp) ? _38_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_36, _37, _38);

struct _71
{
    uint _m0;
    uint _m1;
    int _m2;
    uint _m3;
    uint _m4[6];
    uint _m5[6];
    uint _m6[6];
};

struct _137
{
    uint _m0[1];
};

struct _147
{
    uint _m0[1];
};

struct _199
{
    uint _m0[1];
};

struct _241
{
    uint _m0;
    uint _m1;
};

kernel void ibinary(const device _137& _139 [[buffer(0)]], const device _147& _149 [[buffer(1)]], device _199& _201 [[buffer(2)]], constant _71& _73 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _340 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        if (_340 >= _73._m0)
        {
            break;
        }
        int _91 = int(_73._m1) - 1;
        uint _358;
        uint _359;
        _359 = 0u;
        _358 = 0u;
        int _357 = _91;
        uint _365 = _340;
        for (; _357 >= 0; )
        {
            uint _105 = _365 % _73._m4[_357];
            _365 /= _73._m4[_357];
            _359 += (_105 * _73._m6[_357]);
            _358 += (_105 * _73._m5[_357]);
            _357--;
            continue;
        }
        if (_73._m3 == 0u)
        {
            int _144 = int(_139._m0[_358]);
            int _153 = int(_149._m0[_359]);
            int _364;
            switch (_73._m2)
            {
                case 0:
                {
                    _364 = _144 + _153;
                    break;
                }
                case 1:
                {
                    _364 = _144 - _153;
                    break;
                }
                case 2:
                {
                    _364 = _144 * _153;
                    break;
                }
                case 3:
                {
                    int _363;
                    if (_153 == 0)
                    {
                        _363 = 0;
                    }
                    else
                    {
                        _363 = _144 / _153;
                    }
                    _364 = _363;
                    break;
                }
                case 5:
                {
                    _364 = max(_144, _153);
                    break;
                }
                default:
                {
                    _364 = min(_144, _153);
                    break;
                }
            }
            _201._m0[_340] = uint(_364);
            break;
        }
        uint _210 = 2u * _358;
        uint _215 = 2u * _359;
        uint _221 = _210 + 1u;
        uint _227 = _215 + 1u;
        uint _361;
        uint _362;
        switch (_73._m2)
        {
            case 0:
            {
                _241 _242;
                _242._m0 = _139._m0[_210] + _149._m0[_215];
                _242._m1 = select(uint(1), uint(0), _242._m0 >= max(_139._m0[_210], _149._m0[_215]));
                _362 = (_139._m0[_221] + _149._m0[_227]) + _242._m1;
                _361 = _242._m0;
                break;
            }
            case 1:
            {
                _241 _254;
                _254._m0 = _139._m0[_210] - _149._m0[_215];
                _254._m1 = select(uint(1), uint(0), _139._m0[_210] >= _149._m0[_215]);
                _362 = (_139._m0[_221] - _149._m0[_227]) - _254._m1;
                _361 = _254._m0;
                break;
            }
            case 2:
            {
                _241 _265;
                _265._m0 = _139._m0[_210] * _149._m0[_215];
                _265._m1 = mulhi(_139._m0[_210], _149._m0[_215]);
                _362 = _265._m1 + ((_139._m0[_210] * _149._m0[_227]) + (_139._m0[_221] * _149._m0[_215]));
                _361 = _265._m0;
                break;
            }
            default:
            {
                int _281 = int(_139._m0[_221]);
                int _283 = int(_149._m0[_227]);
                bool _345 = _281 < _283;
                bool _356;
                if (!_345)
                {
                    _356 = (_281 == _283) && (_139._m0[_210] < _149._m0[_215]);
                }
                else
                {
                    _356 = _345;
                }
                bool _360;
                if (_73._m2 == 5)
                {
                    _360 = !_356;
                }
                else
                {
                    _360 = _356;
                }
                _362 = _360 ? _139._m0[_221] : _149._m0[_227];
                _361 = _360 ? _139._m0[_210] : _149._m0[_215];
                break;
            }
        }
        uint _313 = 2u * _340;
        _201._m0[_313] = _361;
        _201._m0[_313 + 1u] = _362;
        break;
    } while(false);
}

